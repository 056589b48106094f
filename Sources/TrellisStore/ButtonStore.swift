import Foundation
import TrellisCore

/// Buttons, their press totals and histories, and the clients registered for them.
///
/// Every mutation is one atomic database operation, so several relays may share one store.
public protocol ButtonStore: Sendable {
    /// Records whether a client is online (a plain upsert: the latest call wins).
    func setClientStatus(client: String, online: Bool, at: Date) async throws

    /// Registers `client` for `button`, or renews its registration, unless the client already
    /// holds `maximumPerClient` registrations of other buttons: then nothing changes and the
    /// answer is nil. The count and the insert are one transaction that holds the client's row,
    /// so concurrent registrations of one client, through any relay, never pass the cap.
    ///
    /// Returns the presses the client missed while offline since it last registered (0 the first
    /// time) and resets that count to 0 in the same transaction, together with the button's
    /// current state. A client with no status yet is marked online.
    func register(client: String, button: String, at: Date, maximumPerClient: Int) async throws -> Registration?

    /// Removes a registration.
    /// - Returns: `false` when the client was not registered for the button.
    func unregister(client: String, button: String) async throws -> Bool

    /// Records one press in a single transaction: adds 1 to the button's total, appends the press
    /// to its history keeping the newest `historyLimit`, and adds 1 to the missed count of every
    /// registration of the button whose client is offline. What `notifying` makes of the button's new
    /// state is queued in the notification outbox in the same transaction: a press is never counted
    /// without its notification, nor notified without being counted.
    /// - Returns: the button's new state and the online registered clients to notify.
    func recordPress(
        button: String, at: Date, historyLimit: Int,
        notifying: @escaping @Sendable (ButtonState) -> [PendingNotification]
    ) async throws -> PressOutcome

    /// Removes a client's registrations and record in one transaction (a client that carries no
    /// identity across connections, once gone).
    func forgetClient(id: String) async throws

    /// A button's state, `nil` when it was never pressed.
    func button(id: String) async throws -> ButtonState?

    /// The id of every button ever pressed, sorted.
    func buttonIDs() async throws -> [String]

    /// A client's status and registrations, `nil` when the store has never seen the client.
    func client(id: String) async throws -> ClientRecord?
}

extension ButtonStore {
    /// Records one press without queueing a notification.
    public func recordPress(button: String, at: Date, historyLimit: Int) async throws -> PressOutcome {
        try await recordPress(button: button, at: at, historyLimit: historyLimit) { _ in [] }
    }

    /// Registers `client` for `button` with no cap on its registrations (imports, tests).
    public func register(client: String, button: String, at: Date) async throws -> Registration {
        // No count reaches Int.max, so the capped call always registers.
        try await register(client: client, button: button, at: at, maximumPerClient: .max)
            ?? Registration(missed: 0, button: nil)
    }
}

/// What ``ButtonStore/register(client:button:at:maximumPerClient:)`` returns.
public struct Registration: Sendable, Equatable {
    /// Presses the client missed while offline since it last registered for the button.
    public var missed: Int
    /// The button's state, `nil` when it was never pressed.
    public var button: ButtonState?

    /// Creates a registration result.
    public init(missed: Int, button: ButtonState?) {
        self.missed = missed
        self.button = button
    }
}

/// What ``ButtonStore/recordPress(button:at:historyLimit:notifying:)`` returns.
public struct PressOutcome: Sendable, Equatable {
    /// The button's state including this press.
    public var snapshot: ButtonState
    /// Registered clients that are online, sorted, to fan the press out to.
    public var onlineClients: [String]

    /// Creates a press outcome.
    public init(snapshot: ButtonState, onlineClients: [String]) {
        self.snapshot = snapshot
        self.onlineClients = onlineClients
    }
}

/// A client's status and registrations.
public struct ClientRecord: Sendable, Equatable {
    /// One registration of the client.
    public struct ButtonRegistration: Sendable, Equatable {
        /// The button registered for.
        public var button: String
        /// Presses missed while offline since the client last registered.
        public var missed: Int

        /// Creates a registration value.
        public init(button: String, missed: Int) {
            self.button = button
            self.missed = missed
        }
    }

    /// The client's identifier.
    public var id: String
    /// Whether the client is online.
    public var online: Bool
    /// The client's registrations, sorted by button.
    public var registrations: [ButtonRegistration]

    /// Creates a client value.
    public init(id: String, online: Bool, registrations: [ButtonRegistration]) {
        (self.id, self.online, self.registrations) = (id, online, registrations)
    }
}
