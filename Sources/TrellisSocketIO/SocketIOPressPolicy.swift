import TrellisCore

/// Who may press a button over Socket.IO. The P2O apps only register and listen, so presses are
/// off unless configured; when on, each session must present the configured token: in the
/// Socket.IO 5 CONNECT's `auth` object (`{"token": "…"}`), in a header of the handshake request
/// (`X-Trellis-Press-Token: …` or `Authorization: Bearer …`, which keeps it out of URLs and the
/// logs that record them), or in the handshake's query string (`?token=…`, the only place a
/// browser's Engine.IO 3 client can put it).
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

    /// The token a session presented: the CONNECT's `auth.token`, else the handshake's header,
    /// else its `token` query parameter.
    public static func presentedToken(auth: JSONValue?, header: String? = nil, query: String?) -> String? {
        if case let .object(fields)? = auth, case let .string(token)? = fields["token"] {
            return token
        }
        return header ?? query
    }

    /// The header that carries the token on its own.
    public static let headerName = "X-Trellis-Press-Token"

    /// The token of a handshake's headers: `X-Trellis-Press-Token`, else the credentials of an
    /// `Authorization` of the `Bearer` scheme (RFC 6750; the scheme's name in any case). Nil when
    /// neither is there; surrounding white space is not part of the token.
    public static func headerToken(pressToken: String?, authorization: String?) -> String? {
        if let pressToken {
            let token = trimmed(pressToken[...])
            if !token.isEmpty { return String(token) }
        }
        guard let authorization else { return nil }
        let parts = trimmed(authorization[...]).split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        let token = trimmed(parts[1])
        return token.isEmpty ? nil : String(token)
    }

    /// `text` without the spaces and tabs around it (HTTP's optional white space).
    static func trimmed(_ text: Substring) -> Substring {
        let blank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = text.firstIndex(where: { !blank($0) }), let last = text.lastIndex(where: { !blank($0) })
        else { return "" }
        return text[first...last]
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
