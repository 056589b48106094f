import TrellisMQTTTypes

/// The id a bridge gives each message it forwards, carried as the MQTT v5 user property
/// `trellis-id`: `<origin>/<sequence>`. The origin names the sending relay, its bridge and its
/// state (`<client id>:<bridge>@<state>`, the state's identity made when it was created), the
/// sequence is the message's place in that bridge's queue: a relay started again on a new state
/// numbers its queue from 1 again, and its messages must not pass for copies of the old ones. A message
/// sent again (its acknowledgement lost, or Trellis restarted before it came) carries the same id,
/// so a receiver drops the copy; a receiver that finds its own relay in the origin knows the
/// message came back to it around a loop of bridges.
public struct BridgeMessageID: Sendable, Hashable {
    /// The user property's name.
    public static let property = "trellis-id"

    public var origin: String
    public var sequence: Int64

    public init(origin: String, sequence: Int64) {
        (self.origin, self.sequence) = (origin, sequence)
    }

    /// The origin of the messages `relay`'s bridge `bridge` sends from the state `state`.
    public static func origin(relay: String, bridge: String, state: String) -> String {
        "\(relay):\(bridge)@\(state)"
    }

    /// The property's value.
    public var text: String { "\(origin)/\(sequence)" }

    /// The longest value taken for an id: a value from an upstream publisher is not trusted, and
    /// each id a receiver carries is kept in its state.
    public static let maxLength = 512

    /// The id in a property's value; nil when it is not one (a sequence after the last `/`, at
    /// most ``maxLength`` bytes in all).
    public init?(text: String) {
        guard text.utf8.count <= Self.maxLength, let slash = text.lastIndex(of: "/"),
            let sequence = Int64(text[text.index(after: slash)...]),
            slash > text.startIndex
        else { return nil }
        self.init(origin: String(text[..<slash]), sequence: sequence)
    }

    /// The id among a message's user properties (the last `trellis-id`); nil when it has none.
    public init?(properties: [UserProperty]) {
        guard let value = properties.last(where: { $0.name == Self.property })?.value else { return nil }
        self.init(text: value)
    }

    /// Whether the message was sent by one of `relay`'s own bridges.
    public func isFrom(relay: String) -> Bool { origin.hasPrefix("\(relay):") }
}

/// The ids a receiver has let through lately, so that a copy of one is dropped: at most
/// `capacity`, the oldest forgotten first. Held in memory and filled, as a receiver's turn starts,
/// with the ids its store recorded (`BridgeCarriedStore`), so a copy is known across a restart.
public struct SeenBridgeIDs: Sendable {
    /// How many ids a receiver remembers, in memory and in its store.
    public static let defaultCapacity = 10_000

    public let capacity: Int
    private var seen: Set<BridgeMessageID> = []
    private var order: [BridgeMessageID] = []
    private var next = 0

    /// Remembers `ids` (oldest first; of more than `capacity`, the newest).
    public init(capacity: Int = defaultCapacity, remembering ids: [BridgeMessageID] = []) {
        self.capacity = max(1, capacity)
        for id in ids.suffix(self.capacity) { _ = admit(id) }
    }

    /// True for an id not seen lately (now remembered), false for a copy.
    public mutating func admit(_ id: BridgeMessageID) -> Bool {
        guard seen.insert(id).inserted else { return false }
        if order.count < capacity {
            order.append(id)
        } else {
            seen.remove(order[next])
            order[next] = id
            next = (next + 1) % capacity
        }
        return true
    }
}

/// What a receiver does with a message that arrived from the upstream broker.
public enum BridgeArrival: Sendable, Equatable {
    /// Carry it to the local broker.
    case carry
    /// Drop it: one of this relay's own bridges sent it, and it came back around a loop.
    case loop
    /// Drop it: a copy of one let through lately.
    case copy
}

extension SeenBridgeIDs {
    /// The fate of a message with `properties` arriving at a receiver of `relay`: a message without
    /// an id (from any other publisher) is carried; one with an id is checked for a loop, then for a
    /// copy, and remembered.
    public mutating func arrival(of properties: [UserProperty], relay: String) -> BridgeArrival {
        guard let id = BridgeMessageID(properties: properties) else { return .carry }
        if id.isFrom(relay: relay) { return .loop }
        return admit(id) ? .carry : .copy
    }
}
