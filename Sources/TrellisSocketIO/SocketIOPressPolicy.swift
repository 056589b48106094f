import TrellisCore

/// Who may press a button over Socket.IO. The P2O apps only register and listen, so presses are
/// off unless configured; when on, each session must present the configured token: in the
/// handshake's query string (`?token=…`, the only place an Engine.IO 3 client can put it) or in
/// the Socket.IO 5 CONNECT's `auth` object (`{"token": "…"}`).
public enum SocketIOPressPolicy: Sendable, Equatable {
    case off
    case token(String)

    /// What a session's presses meet, and the label of the refusal counter.
    public enum Decision: String, Sendable, Equatable {
        case allowed
        case pressesOff = "presses_off"
        case missingToken = "missing_token"
        case wrongToken = "wrong_token"
    }

    /// The decision for a session that presented `token` (nil: none).
    public func decide(_ token: String?) -> Decision {
        switch self {
        case .off: return .pressesOff
        case let .token(expected):
            guard let token, !token.isEmpty else { return .missingToken }
            return Self.constantTimeEqual(Array(token.utf8), Array(expected.utf8)) ? .allowed : .wrongToken
        }
    }

    /// The token a session presented: the CONNECT's `auth.token`, else the handshake's `token`.
    public static func presentedToken(auth: JSONValue?, query: String?) -> String? {
        if case let .object(fields)? = auth, case let .string(token)? = fields["token"] {
            return token
        }
        return query
    }

    /// Compares without stopping at the first difference, so the time taken tells nothing of how
    /// much of a guess was right.
    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        var difference = UInt8(a.count == b.count ? 0 : 1)
        for index in 0..<max(a.count, b.count) {
            difference |= (index < a.count ? a[index] : 0) ^ (index < b.count ? b[index] : 0)
        }
        return difference == 0
    }
}
