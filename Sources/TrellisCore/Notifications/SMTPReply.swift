/// One reply of an SMTP server (RFC 5321 §4.2): a three-digit code and the text of each of its
/// lines, `250-first` … `250 last` for a reply of several lines.
public struct SMTPReply: Sendable, Hashable {
    public var code: Int
    /// The text after the code and its separator, one element per line.
    public var lines: [String]

    public init(code: Int, lines: [String] = [""]) {
        (self.code, self.lines) = (code, lines)
    }

    /// The reply as a failure reason may quote it: the code and the first line, without control
    /// characters, cut to 200 characters (a server's text is not trusted to be short or clean).
    public var quoted: String {
        let text = Self.printable(lines.first ?? "")
        return text.isEmpty ? "\(code)" : "\(code) \(text)"
    }

    /// `text` without control characters, cut to 200 characters: how a server's words appear in
    /// a reason.
    public static func printable(_ text: String) -> String {
        String(
            String.UnicodeScalarView(text.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F }).prefix(200))
    }
}

/// Reads an SMTP server's replies from the bytes it sends, within bounds: a line of at most
/// ``maxLineLength`` bytes, a reply of at most ``maxLines`` lines, every line of a reply with the
/// same code. The client sends one command and waits for its reply, so bytes that follow a
/// complete reply were not asked for: they are refused, which also keeps a server from slipping
/// text in before STARTTLS that would be read as if it came after.
public struct SMTPReplyReader: Sendable {
    /// RFC 5321 §4.5.3.1.5 allows 512 bytes for a reply line; longer ones are taken up to this
    /// many bytes, not counting the line break.
    public static let maxLineLength = 1000
    /// An EHLO reply has one line per extension, rarely 20.
    public static let maxLines = 100

    public enum Outcome: Sendable, Equatable {
        /// The reply goes on in bytes yet to come.
        case needMore
        case reply(SMTPReply)
        /// The bytes are not a reply this client takes; the connection is done.
        case failed(String)
    }

    private var line: [UInt8] = []
    private var lines: [String] = []
    private var code: Int?
    private var broken: String?

    public init() {}

    /// Takes the next `bytes` the server sent.
    public mutating func read(_ bytes: some Collection<UInt8>) -> Outcome {
        if let broken { return .failed(broken) }
        var index = bytes.startIndex
        while index != bytes.endIndex {
            let byte = bytes[index]
            bytes.formIndex(after: &index)
            guard byte == UInt8(ascii: "\n") else {
                line.append(byte)
                // One byte more for the CR of its CRLF.
                if line.count > Self.maxLineLength + 1 {
                    return fail("sent a reply line longer than \(Self.maxLineLength) bytes")
                }
                continue
            }
            if line.last == UInt8(ascii: "\r") { line.removeLast() }
            if line.count > Self.maxLineLength {
                return fail("sent a reply line longer than \(Self.maxLineLength) bytes")
            }
            switch take(line) {
            case let .failed(reason): return fail(reason)
            case .needMore: line = []
            case let .reply(reply):
                line = []
                guard index == bytes.endIndex else { return fail("sent more than one reply at once") }
                return .reply(reply)
            }
        }
        return .needMore
    }

    /// One line without its line break: the reply's last line, one more of it, or not a reply line.
    private mutating func take(_ line: [UInt8]) -> Outcome {
        guard line.count >= 3, line.count == 3 || [UInt8(ascii: "-"), UInt8(ascii: " ")].contains(line[3]),
            (UInt8(ascii: "2")...UInt8(ascii: "5")).contains(line[0]),
            (UInt8(ascii: "0")...UInt8(ascii: "5")).contains(line[1]),
            (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(line[2])
        else { return .failed("sent a line that is not an SMTP reply") }
        let lineCode = line[0..<3].reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
        if let code, code != lineCode {
            return .failed("sent a reply whose lines have different codes (\(code), \(lineCode))")
        }
        code = lineCode
        lines.append(String(decoding: line.dropFirst(4), as: UTF8.self))
        if line.count > 3, line[3] == UInt8(ascii: "-") {
            guard lines.count < Self.maxLines else {
                return .failed("sent a reply of more than \(Self.maxLines) lines")
            }
            return .needMore
        }
        defer { (lines, code) = ([], nil) }
        return .reply(SMTPReply(code: lineCode, lines: lines))
    }

    private mutating func fail(_ reason: String) -> Outcome {
        broken = reason
        return .failed(reason)
    }
}
