import Testing
import TrellisCore

/// Replies read from an SMTP server's bytes, and what a hostile server cannot do with them: lines
/// without end, replies without end, wrong codes, text that is not a reply, more than was asked.
@Suite("SMTP replies: parsing and bounds")
struct SMTPReplyReaderTests {
    static func read(_ chunks: [String]) -> [SMTPReplyReader.Outcome] {
        var reader = SMTPReplyReader()
        return chunks.map { reader.read(Array($0.utf8)) }
    }

    @Test("a one-line reply, with CRLF, a bare LF, and no text")
    func oneLine() {
        #expect(
            Self.read(["220 mail.example ESMTP ready\r\n"]) == [
                .reply(SMTPReply(code: 220, lines: ["mail.example ESMTP ready"]))
            ])
        #expect(Self.read(["250 ok\n"]) == [.reply(SMTPReply(code: 250, lines: ["ok"]))])
        #expect(Self.read(["354\r\n"]) == [.reply(SMTPReply(code: 354, lines: [""]))])
    }

    @Test("a reply of several lines, in pieces cut anywhere, even inside CRLF")
    func multiLine() {
        let whole = "250-mail.example\r\n250-STARTTLS\r\n250-AUTH PLAIN LOGIN\r\n250 SIZE 1000\r\n"
        let reply = SMTPReply(code: 250, lines: ["mail.example", "STARTTLS", "AUTH PLAIN LOGIN", "SIZE 1000"])
        for cut in 1..<whole.utf8.count {
            let bytes = Array(whole.utf8)
            var reader = SMTPReplyReader()
            #expect(reader.read(bytes[..<cut]) == .needMore)
            #expect(reader.read(bytes[cut...]) == .reply(reply))
        }
        // One byte at a time.
        var reader = SMTPReplyReader()
        let outcomes = whole.utf8.map { reader.read([$0]) }
        #expect(outcomes.last == .reply(reply) && outcomes.dropLast().allSatisfy { $0 == .needMore })
    }

    @Test("replies one after another, each read when it comes")
    func successive() {
        #expect(
            Self.read(["220 hi\r\n", "250-a\r\n250 b\r\n", "235 2.7.0 ok\r\n"]) == [
                .reply(SMTPReply(code: 220, lines: ["hi"])), .reply(SMTPReply(code: 250, lines: ["a", "b"])),
                .reply(SMTPReply(code: 235, lines: ["2.7.0 ok"]))
            ])
    }

    @Test("a line without end is refused at the bound, not kept growing")
    func endlessLine() {
        var reader = SMTPReplyReader()
        let chunk = [UInt8](repeating: UInt8(ascii: "a"), count: 600)
        #expect(reader.read(Array("250 ".utf8)) == .needMore)
        #expect(reader.read(chunk) == .needMore)
        guard case let .failed(reason) = reader.read(chunk) else {
            Issue.record("an endless line was taken")
            return
        }
        #expect(reason.contains("longer than 1000"))
        // Broken for good: nothing more is read.
        #expect(reader.read(Array("250 ok\r\n".utf8)) == .failed(reason))
        // 1,000 bytes is the most a line may have.
        let longest = "250 " + String(repeating: "x", count: SMTPReplyReader.maxLineLength - 4) + "\r\n"
        #expect(Self.read([longest]).first.map { if case .reply = $0 { true } else { false } } == true)
    }

    @Test("a reply without end is refused after 100 lines")
    func endlessReply() {
        var reader = SMTPReplyReader()
        var outcome = SMTPReplyReader.Outcome.needMore
        var lines = 0
        while outcome == .needMore, lines < 10_000 {
            outcome = reader.read(Array("250-more\r\n".utf8))
            lines += 1
        }
        #expect(lines == SMTPReplyReader.maxLines)
        #expect(outcome == .failed("sent a reply of more than 100 lines"))
        var last = SMTPReplyReader()
        let ninetyNine = String(repeating: "250-x\r\n", count: 99) + "250 end\r\n"
        guard case let .reply(reply) = last.read(Array(ninetyNine.utf8)) else {
            Issue.record("a reply of 100 lines was refused")
            return
        }
        #expect(reply.lines.count == 100)
    }

    @Test(
        "lines that are not a reply are refused",
        arguments: [
            "hello\r\n", "25\r\n", "2500 ok\r\n", "250_ok\r\n", "650 ok\r\n", "190 ok\r\n", "260 ok\r\n", "2a0 ok\r\n",
            "\r\n", "HTTP/1.1 200 OK\r\n", "\u{0}\u{0}\u{0}\r\n"
        ])
    func notReplies(_ text: String) {
        guard case .failed = Self.read([text]).first else {
            Issue.record("\(text.debugDescription) was taken as a reply")
            return
        }
    }

    @Test("the lines of one reply must share its code")
    func mixedCodes() {
        #expect(
            Self.read(["250-a\r\n550 b\r\n"]) == [.failed("sent a reply whose lines have different codes (250, 550)")])
    }

    @Test("bytes after a complete reply were not asked for: refused, as text slipped in before TLS would be")
    func unasked() {
        #expect(Self.read(["220 go ahead\r\n250 AUTH ok\r\n"]) == [.failed("sent more than one reply at once")])
        #expect(Self.read(["220 go ahead\r\nX"]) == [.failed("sent more than one reply at once")])
    }

    @Test("text that is not UTF-8 is read without failing; quoted, it is cut and without control characters")
    func quoted() {
        var reader = SMTPReplyReader()
        let bytes = Array("550 ".utf8) + [0xFF, 0xFE, 0x1B] + Array("[31mred".utf8) + Array("\r\n".utf8)
        guard case let .reply(reply) = reader.read(bytes) else {
            Issue.record("not read")
            return
        }
        #expect(reply.code == 550)
        #expect(!reply.quoted.unicodeScalars.contains { $0.value < 0x20 })
        #expect(SMTPReply(code: 550, lines: [String(repeating: "z", count: 900)]).quoted.count == 204)
        #expect(SMTPReply(code: 354, lines: [""]).quoted == "354")
    }
}
