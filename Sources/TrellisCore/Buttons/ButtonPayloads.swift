#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A button as clients see it: its id, its total presses and its latest presses, oldest first.
public struct ButtonState: Sendable, Equatable {
    public var id: String
    public var total: Int
    public var history: [Date]

    public init(id: String, total: Int, history: [Date]) {
        self.id = id
        self.total = total
        self.history = history
    }
}

/// The JSON payloads of the button service, with the members of the original socket.io events.
/// Keys are sorted so the same state always gives the same bytes.
public enum ButtonPayloads {
    /// At most this many presses are kept and shown per button.
    public static let historyLimit = 20

    /// `connection-response` for a valid client: `{"status":"success"}`.
    public static func connectionSuccess() -> [UInt8] { encode(StatusOnly(status: "success")) }

    /// `connection-response`, `register-response` or `unregister-response` refusing the request.
    public static func failure(_ error: String) -> [UInt8] { encode(Failure(status: "failed", error: error)) }

    /// `unregister-response` on success.
    public static func unregisterSuccess() -> [UInt8] { encode(StatusOnly(status: "success")) }

    /// `register-response` on success; `button` is left out when the button was never seen, and
    /// `missed` is the number of presses the client missed while offline.
    public static func registerSuccess(button: ButtonState?, missed: Int) -> [UInt8] {
        encode(
            Register(
                status: "success",
                button: button.map {
                    RegisteredButton(id: $0.id, count: missed, history: $0.history.map(ISO8601Time.format))
                }))
    }

    /// The retained `p2o/buttons/<button>/state`: `{"history":[…],"id":…,"total":…}`.
    public static func state(_ button: ButtonState) -> [UInt8] {
        encode(State(id: button.id, total: button.total, history: button.history.map(ISO8601Time.format)))
    }

    private struct StatusOnly: Encodable { var status: String }
    private struct Failure: Encodable { var status: String; var error: String }
    private struct Register: Encodable { var status: String; var button: RegisteredButton? }
    private struct RegisteredButton: Encodable { var id: String; var count: Int; var history: [String] }
    private struct State: Encodable { var id: String; var total: Int; var history: [String] }

    private static func encode(_ value: some Encodable) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? Array(encoder.encode(value))) ?? Array(#"{"status":"failed","error":"encoding failed"}"#.utf8)
    }
}
