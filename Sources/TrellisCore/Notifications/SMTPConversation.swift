import Foundation

/// The client's side of one SMTP conversation that delivers one message (RFC 5321), as decisions:
/// each reply of the server goes in, the next step comes out. The driver holds the connection and
/// does what the step says. TLS is mandatory: the conversation starts TLS (STARTTLS, RFC 3207)
/// before it logs in or names a mailbox, and a server that does not offer it is a failure; then
/// AUTH PLAIN or LOGIN (RFC 4954), MAIL FROM, RCPT TO, DATA with the dot-stuffed message, QUIT.
public struct SMTPConversation: Sendable {
    /// What the driver does next.
    public enum Action: Sendable, Equatable {
        /// Write these bytes and wait for the reply.
        case send([UInt8])
        /// Start TLS on the connection (nothing more is read or written in clear), then call
        /// ``tlsStarted()``.
        case startTLS
        /// The server took the message: write these bytes (QUIT) and close; the mail is sent.
        case finish([UInt8])
        /// The conversation is over without the message sent: close, with the reason.
        case failed(String)
    }

    /// The account to log in with.
    public struct Login: Sendable, Hashable {
        public var user: String
        public var password: String
        public init(user: String, password: String) { (self.user, self.password) = (user, password) }
    }

    enum State: Sendable, Equatable {
        case greeting, ehlo, startTLS, handshake, authPlain, authLoginUser, authLoginPassword, authLoginDone
        case mailFrom, rcptTo, data, message, finished, failed
    }

    private(set) var state = State.greeting
    private var secure: Bool
    private let clientName: String
    private let from: String
    private let to: String
    private let message: [UInt8]
    private let login: Login
    private let server: String

    /// - Parameters:
    ///   - server: `host:port`, which reasons name.
    ///   - clientName: the name EHLO gives for this host (`localhost` if it is not a domain).
    ///   - message: the RFC 5322 message with CRLF line ends, not yet dot-stuffed.
    ///   - secure: true when TLS is on from the start (`smtps://`, RFC 8314), not by STARTTLS.
    public init(
        server: String, clientName: String, from: String, to: String, message: [UInt8], login: Login,
        secure: Bool = false
    ) {
        (self.server, self.from, self.to) = (server, from, to)
        // EHLO's argument is a domain: anything else is dropped, so it cannot end the command.
        let name = clientName.filter { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "-") }
        self.clientName = name.isEmpty ? "localhost" : name
        (self.message, self.login, self.secure) = (message, login, secure)
    }

    /// The next step after the server's `reply`.
    public mutating func receive(_ reply: SMTPReply) -> Action {
        switch state {
        case .greeting:
            guard reply.code == 220 else { return refused("its greeting", reply) }
            guard Self.isAddress(from), Self.isAddress(to) else {
                return fail("the sender or the recipient is not a plain address; nothing was sent to \(server)")
            }
            return ehlo()
        case .ehlo:
            guard reply.code == 250 else { return refused("EHLO", reply) }
            let extensions = Self.extensions(reply)
            if !secure {
                guard extensions["STARTTLS"] != nil else {
                    return fail("\(server) does not offer STARTTLS; mail is never sent in clear")
                }
                state = .startTLS
                return .send(Self.line("STARTTLS"))
            }
            let mechanisms = extensions["AUTH"] ?? []
            if mechanisms.contains("PLAIN") {
                state = .authPlain
                let credentials = Array("\0\(login.user)\0\(login.password)".utf8)
                return .send(Self.line("AUTH PLAIN " + Data(credentials).base64EncodedString()))
            }
            if mechanisms.contains("LOGIN") {
                state = .authLoginUser
                return .send(Self.line("AUTH LOGIN"))
            }
            let offered = SMTPReply.printable(mechanisms.joined(separator: " "))
            return fail("\(server) offers no AUTH PLAIN or LOGIN after TLS (it offers: \(offered))")
        case .startTLS:
            guard reply.code == 220 else { return refused("STARTTLS", reply) }
            state = .handshake
            return .startTLS
        case .authLoginUser, .authLoginPassword:
            guard reply.code == 334 else { return refusedLogin(reply) }
            let next = state == .authLoginUser ? login.user : login.password
            state = state == .authLoginUser ? .authLoginPassword : .authLoginDone
            return .send(Self.line(Data(next.utf8).base64EncodedString()))
        case .authPlain, .authLoginDone:
            guard reply.code == 235 else { return refusedLogin(reply) }
            state = .mailFrom
            return .send(Self.line("MAIL FROM:<\(from)>"))
        case .mailFrom:
            guard reply.code == 250 else { return refused("MAIL FROM:<\(from)>", reply) }
            state = .rcptTo
            return .send(Self.line("RCPT TO:<\(to)>"))
        case .rcptTo:
            guard reply.code == 250 || reply.code == 251 else { return refused("RCPT TO:<\(to)>", reply) }
            state = .data
            return .send(Self.line("DATA"))
        case .data:
            guard reply.code == 354 else { return refused("DATA", reply) }
            state = .message
            return .send(Self.stuffed(message))
        case .message:
            guard reply.code == 250 else { return refused("the message", reply) }
            state = .finished
            return .finish(Self.line("QUIT"))
        case .handshake:
            return fail("\(server) answered before TLS was started")
        case .finished, .failed:
            return fail("\(server) answered after the conversation was over")
        }
    }

    /// TLS is on: the conversation starts again with EHLO, forgetting what the server offered in
    /// clear (RFC 3207 §4.2).
    public mutating func tlsStarted() -> Action {
        guard state == .handshake else { return fail("TLS started out of turn") }
        secure = true
        return ehlo()
    }

    /// The server closed the connection: the reason, unless the message was already taken.
    public mutating func closed() -> Action {
        guard state != .finished else { return .finish([]) }
        return fail("\(server) closed the connection before the message was sent")
    }

    private mutating func ehlo() -> Action {
        state = .ehlo
        return .send(Self.line("EHLO \(clientName)"))
    }

    /// A reply that is not the one wanted: 4xx is a refusal for now, 5xx for good, anything else
    /// a server out of step; the server's text is quoted without the password.
    private mutating func refused(_ what: String, _ reply: SMTPReply) -> Action {
        let verb =
            switch reply.code {
            case 400..<500: "temporarily refused \(what):"
            case 500..<600: "refused \(what):"
            default: "answered \(what) with"
            }
        // Redacted before it is cut and cleaned, so no part of a password survives the cut.
        let quoted = SMTPReply(code: reply.code, lines: [redacted(reply.lines.first ?? "")]).quoted
        return fail("\(server) \(verb) \(quoted)")
    }

    private mutating func refusedLogin(_ reply: SMTPReply) -> Action {
        refused("the login of \(login.user)", reply)
    }

    private mutating func fail(_ reason: String) -> Action {
        state = .failed
        return .failed(reason)
    }

    /// `text` without the password in any form it was sent in: a server's text is quoted in the
    /// reason, and a server may echo what it was given.
    func redacted(_ text: String) -> String {
        guard !login.password.isEmpty else { return text }
        let forms = [
            login.password, Data(login.password.utf8).base64EncodedString(),
            Data("\0\(login.user)\0\(login.password)".utf8).base64EncodedString()
        ]
        return forms.reduce(text) { $0.replacingOccurrences(of: $1, with: "***") }
    }

    /// The keywords of an EHLO reply's lines after the first, in capitals, with their parameters
    /// (`AUTH PLAIN LOGIN`, and the older `AUTH=LOGIN`).
    static func extensions(_ reply: SMTPReply) -> [String: [String]] {
        var found: [String: [String]] = [:]
        for line in reply.lines.dropFirst() {
            let words = line.uppercased().split(whereSeparator: { $0 == " " || $0 == "=" }).map(String.init)
            guard let keyword = words.first else { continue }
            found[keyword, default: []] += words.dropFirst()
        }
        return found
    }

    /// Whether `text` is a plain mailbox address, `local@domain` in printable ASCII without the
    /// characters that would end it in a command (`<`, `>`, spaces, line breaks, quotes): what
    /// MAIL FROM and RCPT TO may carry.
    public static func isAddress(_ text: String) -> Bool {
        let forbidden = Set("<>()[]\\,;:\"".unicodeScalars)
        guard text.utf8.count <= 254, let at = text.lastIndex(of: "@"), at != text.startIndex,
            text.index(after: at) != text.endIndex
        else { return false }
        return text.unicodeScalars.allSatisfy { (0x21...0x7E).contains($0.value) && !forbidden.contains($0) }
    }

    static func line(_ text: String) -> [UInt8] { Array((text + "\r\n").utf8) }

    /// `message` for DATA (RFC 5321 §4.5.2): a line that starts with "." gets another, and
    /// `CRLF . CRLF` ends it.
    public static func stuffed(_ message: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(message.count + 16)
        var atLineStart = true
        for byte in message {
            if atLineStart, byte == UInt8(ascii: ".") { out.append(byte) }
            out.append(byte)
            atLineStart = byte == UInt8(ascii: "\n")
        }
        if !atLineStart { out += [13, 10] }
        return out + Array(".\r\n".utf8)
    }
}
