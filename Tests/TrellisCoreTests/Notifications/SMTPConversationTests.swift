import Foundation
import Testing
import TrellisCore

/// The SMTP conversation's decisions, reply by reply: TLS before anything that matters, the login
/// by PLAIN or LOGIN, the envelope, the message dot-stuffed, and every refusal a failure whose
/// reason names the server and never holds the password.
@Suite("SMTP conversation: the client's decisions")
struct SMTPConversationTests {
    static let login = SMTPConversation.Login(user: "bob", password: "hunter2-Pa55")

    static func conversation(secure: Bool = false, message: String = "Subject: x\r\n\r\nhello\r\n") -> SMTPConversation
    {
        SMTPConversation(
            server: "mail.example:587", clientName: "relay.example", from: "trellis@relay.example",
            to: "me@example.org", message: Array(message.utf8), login: login, secure: secure)
    }

    static func reply(_ code: Int, _ lines: String...) -> SMTPReply {
        SMTPReply(code: code, lines: lines.isEmpty ? [""] : lines)
    }

    static func send(_ text: String) -> SMTPConversation.Action { .send(Array(text.utf8)) }

    static func failure(_ action: SMTPConversation.Action) -> String? {
        if case let .failed(reason) = action { reason } else { nil }
    }

    @Test("STARTTLS, EHLO again, AUTH PLAIN, MAIL FROM, RCPT TO, DATA, the message, QUIT")
    func wholeConversation() {
        var smtp = Self.conversation()
        #expect(smtp.receive(Self.reply(220, "mail.example ESMTP")) == Self.send("EHLO relay.example\r\n"))
        // In clear, AUTH offered or not, only STARTTLS is sent.
        #expect(
            smtp.receive(Self.reply(250, "mail.example", "AUTH PLAIN LOGIN", "STARTTLS"))
                == Self.send("STARTTLS\r\n"))
        #expect(smtp.receive(Self.reply(220, "go ahead")) == .startTLS)
        #expect(smtp.tlsStarted() == Self.send("EHLO relay.example\r\n"))
        let plain = Data("\0bob\0hunter2-Pa55".utf8).base64EncodedString()
        #expect(
            smtp.receive(Self.reply(250, "mail.example", "AUTH LOGIN PLAIN")) == Self.send("AUTH PLAIN \(plain)\r\n"))
        #expect(smtp.receive(Self.reply(235, "2.7.0 ok")) == Self.send("MAIL FROM:<trellis@relay.example>\r\n"))
        #expect(smtp.receive(Self.reply(250)) == Self.send("RCPT TO:<me@example.org>\r\n"))
        #expect(smtp.receive(Self.reply(250)) == Self.send("DATA\r\n"))
        #expect(smtp.receive(Self.reply(354)) == Self.send("Subject: x\r\n\r\nhello\r\n.\r\n"))
        #expect(smtp.receive(Self.reply(250, "queued")) == .finish(Array("QUIT\r\n".utf8)))
        // A close after the message was taken is no failure.
        #expect(smtp.closed() == .finish([]))
    }

    @Test("AUTH LOGIN when PLAIN is not offered; the old AUTH= form is understood")
    func authLogin() {
        var smtp = Self.conversation(secure: true)
        _ = smtp.receive(Self.reply(220))
        #expect(smtp.receive(Self.reply(250, "mail.example", "AUTH=LOGIN")) == Self.send("AUTH LOGIN\r\n"))
        #expect(smtp.receive(Self.reply(334, "VXNlcm5hbWU6")) == Self.send("Ym9i\r\n"))
        #expect(
            smtp.receive(Self.reply(334, "UGFzc3dvcmQ6"))
                == Self.send(Data("hunter2-Pa55".utf8).base64EncodedString() + "\r\n"))
        #expect(smtp.receive(Self.reply(235)) == Self.send("MAIL FROM:<trellis@relay.example>\r\n"))
    }

    @Test("smtps: TLS from the start, so AUTH follows the first EHLO and STARTTLS is not asked for")
    func implicitTLS() {
        var smtp = Self.conversation(secure: true)
        _ = smtp.receive(Self.reply(220))
        guard case let .send(bytes) = smtp.receive(Self.reply(250, "x", "AUTH PLAIN", "STARTTLS")) else {
            Issue.record("no AUTH")
            return
        }
        #expect(String(decoding: bytes, as: UTF8.self).hasPrefix("AUTH PLAIN "))
    }

    @Test("a server without STARTTLS is refused before any login, even if it offers AUTH in clear")
    func noStartTLS() {
        var smtp = Self.conversation()
        _ = smtp.receive(Self.reply(220))
        let reason = Self.failure(smtp.receive(Self.reply(250, "mail.example", "AUTH PLAIN LOGIN")))
        #expect(reason == "mail.example:587 does not offer STARTTLS; mail is never sent in clear")
        // Over: nothing it says afterwards gets a login out.
        #expect(Self.failure(smtp.receive(Self.reply(235))) != nil)
    }

    @Test("after TLS, the offers in clear are forgotten: no AUTH offered then is a failure")
    func forgetsClearOffers() throws {
        var smtp = Self.conversation()
        _ = smtp.receive(Self.reply(220))
        _ = smtp.receive(Self.reply(250, "x", "STARTTLS", "AUTH PLAIN"))
        _ = smtp.receive(Self.reply(220))
        _ = smtp.tlsStarted()
        let reason = Self.failure(smtp.receive(Self.reply(250, "x", "AUTH CRAM-MD5")))
        #expect(reason == "mail.example:587 offers no AUTH PLAIN or LOGIN after TLS (it offers: CRAM-MD5)")
        // What a server offers is its text: bounded and without control characters in the reason.
        var hostile = Self.conversation(secure: true)
        _ = hostile.receive(Self.reply(220))
        let flood = Array(repeating: "AUTH X\u{1B}[2J" + String(repeating: "Y", count: 900), count: 99)
        let long = try #require(Self.failure(hostile.receive(SMTPReply(code: 250, lines: ["x"] + flood))))
        #expect(long.count < 300 && !long.unicodeScalars.contains { $0.value < 0x20 })
    }

    @Test("a refused login names the server and the user, never the password, even when the server echoes it")
    func refusedLogin() throws {
        var smtp = Self.conversation(secure: true)
        _ = smtp.receive(Self.reply(220))
        _ = smtp.receive(Self.reply(250, "x", "AUTH PLAIN"))
        let plain = Data("\0bob\0hunter2-Pa55".utf8).base64EncodedString()
        let reason = try #require(
            Self.failure(smtp.receive(Self.reply(535, "5.7.8 bad credentials hunter2-Pa55 \(plain)"))))
        #expect(reason.hasPrefix("mail.example:587 refused the login of bob: 535 5.7.8 bad credentials"))
        #expect(!reason.contains("hunter2") && !reason.contains(plain))
    }

    @Test("4xx is told as temporary, 5xx as a refusal; a wrong code at any step is a failure")
    func refusals() {
        var greeting = Self.conversation()
        #expect(
            Self.failure(greeting.receive(Self.reply(421, "too busy")))
                == "mail.example:587 temporarily refused its greeting: 421 too busy")
        var rcpt = Self.conversation(secure: true)
        for reply in [Self.reply(220), Self.reply(250, "x", "AUTH PLAIN"), Self.reply(235), Self.reply(250)] {
            _ = rcpt.receive(reply)
        }
        #expect(
            Self.failure(rcpt.receive(Self.reply(550, "5.1.1 no such user")))
                == "mail.example:587 refused RCPT TO:<me@example.org>: 550 5.1.1 no such user")
        // A 354 where 250 belongs, a 250 where STARTTLS wants 220.
        var wrong = Self.conversation()
        _ = wrong.receive(Self.reply(220))
        #expect(Self.failure(wrong.receive(Self.reply(354))) != nil)
        var tls = Self.conversation()
        _ = tls.receive(Self.reply(220))
        _ = tls.receive(Self.reply(250, "x", "STARTTLS"))
        #expect(Self.failure(tls.receive(Self.reply(250))) == "mail.example:587 answered STARTTLS with 250")
    }

    @Test("out of turn: a reply during the handshake, TLS started unasked, a close before the end")
    func outOfTurn() {
        var smtp = Self.conversation()
        #expect(Self.failure(smtp.tlsStarted()) != nil)
        var handshake = Self.conversation()
        _ = handshake.receive(Self.reply(220))
        _ = handshake.receive(Self.reply(250, "x", "STARTTLS"))
        #expect(handshake.receive(Self.reply(220)) == .startTLS)
        #expect(Self.failure(handshake.receive(Self.reply(250))) != nil)
        var closed = Self.conversation()
        #expect(
            Self.failure(closed.closed()) == "mail.example:587 closed the connection before the message was sent")
    }

    @Test("an address that would break a command is refused before anything is sent")
    func addresses() {
        // The host's name in EHLO cannot end the command either.
        var named = SMTPConversation(
            server: "m:25", clientName: "relay\r\nMAIL FROM:<x@y>", from: "a@b.example", to: "c@d.example",
            message: [], login: Self.login)
        #expect(named.receive(Self.reply(220)) == Self.send("EHLO relayMAILFROMxy\r\n"))
        for address in ["me@example.org\r\nRCPT TO:<x@y>", "a b@c", "<x@y>", "x", "@y", "x@", "é@example.org"] {
            #expect(!SMTPConversation.isAddress(address), "\(address)")
        }
        #expect(SMTPConversation.isAddress("first.last+plants@sub.example.org"))
        var smtp = SMTPConversation(
            server: "m:25", clientName: "h", from: "a@b\r\nDATA", to: "me@example.org", message: [], login: Self.login)
        #expect(Self.failure(smtp.receive(Self.reply(220))) != nil)
    }

    @Test("dot-stuffing: a line starting with a dot gets another; the end is CRLF . CRLF")
    func dotStuffing() {
        func stuffed(_ text: String) -> String {
            String(decoding: SMTPConversation.stuffed(Array(text.utf8)), as: UTF8.self)
        }
        #expect(stuffed(".\r\n") == "..\r\n.\r\n")
        #expect(stuffed("a\r\n.b\r\n..\r\nc.d\r\n") == "a\r\n..b\r\n...\r\nc.d\r\n.\r\n")
        #expect(stuffed("no line end") == "no line end\r\n.\r\n")
        #expect(stuffed(".") == "..\r\n.\r\n")
        #expect(stuffed("") == ".\r\n")
    }
}
