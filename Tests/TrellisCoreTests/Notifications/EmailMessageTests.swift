import Foundation
import Testing
import TrellisCore

/// A notification as an email: headers of RFC 5322, a subject in RFC 2047 encoded words when it
/// must be, the body in quoted-printable, every line bounded and ended by CRLF.
@Suite("Email message: headers, encoded words, quoted-printable")
struct EmailMessageTests {
    static let created = Date(timeIntervalSince1970: 1_795_344_000)

    static func message(subject: String = "Fern is dry", body: String = "Fern is dry (0x37: 12, limit 20).")
        -> EmailMessage
    {
        EmailMessage(
            from: "trellis@relay.example", to: "me@example.org", subject: subject, body: body, date: created,
            messageID: "abc.1@relay.example", extraHeaders: [("X-Trellis-Event", "care_alert:Fern:dry:0x37:start")])
    }

    static func lines(_ message: EmailMessage) -> [String] {
        String(decoding: message.bytes, as: UTF8.self).components(separatedBy: "\r\n")
    }

    @Test("the headers, a blank line, the body; CRLF only, no line over 78")
    func layout() {
        let message = Self.message()
        let lines = Self.lines(message)
        #expect(
            Array(lines.prefix(11)) == [
                "From: Trellis <trellis@relay.example>", "To: me@example.org", "Subject: Fern is dry",
                "Date: Sun, 22 Nov 2026 10:40:00 +0000", "Message-ID: <abc.1@relay.example>", "MIME-Version: 1.0",
                "Content-Type: text/plain; charset=utf-8", "Content-Transfer-Encoding: quoted-printable",
                "Auto-Submitted: auto-generated", "X-Trellis-Event: care_alert:Fern:dry:0x37:start", ""
            ])
        #expect(lines[11] == "Fern is dry (0x37: 12, limit 20).")
        let text = message.bytes
        for (index, byte) in text.enumerated() where byte == 10 { #expect(index > 0 && text[index - 1] == 13) }
        #expect(lines.allSatisfy { $0.utf8.count <= 78 })
        #expect(text.allSatisfy { $0 < 0x80 })
    }

    @Test("RFC 5322 dates: the weekday, one-digit days, midnight, the end of a year")
    func dates() {
        #expect(EmailMessage.date(Date(timeIntervalSince1970: 0)) == "Thu, 1 Jan 1970 00:00:00 +0000")
        #expect(EmailMessage.date(Date(timeIntervalSince1970: 1_798_761_599)) == "Thu, 31 Dec 2026 23:59:59 +0000")
    }

    @Test("a non-ASCII or long subject becomes encoded words that decode to it, none splitting a character")
    func encodedSubject() throws {
        for subject in [
            "Farn ist trocken 🌿 — Gießen!", String(repeating: "Ωmega ", count: 40),
            String(repeating: "long plain words ", count: 20), "looks =?utf-8?B?like?= a word", "",
            "line\r\nBcc: injected@example.org"
        ] {
            let header = EmailMessage.header("Subject", subject)
            let lines = header.components(separatedBy: "\r\n")
            #expect(lines.allSatisfy { $0.utf8.count <= 76 && $0.utf8.allSatisfy { $0 < 0x80 } }, "\(header)")
            #expect(lines.dropFirst().allSatisfy { $0.hasPrefix(" ") })
            let expected = subject.replacingOccurrences(of: "\r\n", with: "")
            #expect(try Self.decode(header) == expected, "\(header)")
        }
        #expect(EmailMessage.header("Subject", "Fern is dry") == "Subject: Fern is dry")
    }

    /// Decodes `Name: value` written by ``EmailMessage/header(_:_:)``: plain, or base64 UTF-8
    /// encoded words separated by folding whitespace (which RFC 2047 §6.2 says to drop).
    static func decode(_ header: String) throws -> String {
        let value = String(header.drop { $0 != ":" }.dropFirst(2))
        guard value.hasPrefix("=?") else { return value }
        var bytes: [UInt8] = []
        for word in value.components(separatedBy: "\r\n ") {
            #expect(word.hasPrefix("=?utf-8?B?") && word.hasSuffix("?="))
            let base64 = String(word.dropFirst(10).dropLast(2))
            bytes += try #require(Data(base64Encoded: base64))
            // Each word holds whole characters.
            #expect(String(validating: try #require(Data(base64Encoded: base64)), as: UTF8.self) != nil)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test("quoted-printable: =, non-ASCII and trailing spaces encoded, soft breaks at 76, line breaks kept")
    func quotedPrintable() throws {
        #expect(EmailMessage.quotedPrintable("a=b") == "a=3Db")
        #expect(EmailMessage.quotedPrintable("Gieß") == "Gie=C3=9F")
        #expect(EmailMessage.quotedPrintable("end \nx\t") == "end=20\r\nx=09")
        #expect(EmailMessage.quotedPrintable("a\r\nb\rc\n") == "a\r\nb\r\nc\r\n")
        let long = String(repeating: "é", count: 500) + String(repeating: "x", count: 500)
        let encoded = EmailMessage.quotedPrintable(long)
        let lines = encoded.components(separatedBy: "\r\n")
        #expect(lines.allSatisfy { $0.utf8.count <= 76 })
        #expect(try Self.decodeQuotedPrintable(encoded) == long)
        let hostile = "\u{0}\u{1B}[2J.\r\n.\r\n" + String(repeating: "=", count: 300)
        #expect(try Self.decodeQuotedPrintable(EmailMessage.quotedPrintable(hostile)) == hostile)
    }

    /// Undoes quoted-printable as RFC 2045 §6.7 reads it: soft breaks dropped, `=XX` a byte.
    static func decodeQuotedPrintable(_ text: String) throws -> String {
        let joined = Array(text.replacingOccurrences(of: "=\r\n", with: "").utf8)
        var bytes: [UInt8] = []
        var index = 0
        while index < joined.count {
            if joined[index] == UInt8(ascii: "=") {
                bytes.append(
                    try #require(UInt8(String(decoding: joined[index + 1...index + 2], as: UTF8.self), radix: 16)))
                index += 3
            } else {
                bytes.append(joined[index])
                index += 1
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test("the Message-ID is the same for every attempt at one notification, and differs between two")
    func messageID() {
        let first = EmailMessage.messageID(
            channel: "mail", eventKey: "k1", created: Self.created, from: "t@relay.example")
        #expect(
            first
                == EmailMessage.messageID(
                    channel: "mail", eventKey: "k1", created: Self.created, from: "t@relay.example"))
        #expect(
            first
                != EmailMessage.messageID(
                    channel: "mail", eventKey: "k2", created: Self.created, from: "t@relay.example"))
        #expect(first.hasSuffix(".1795344000000@relay.example"))
        #expect(SMTPConversation.isAddress(first))
    }
}
