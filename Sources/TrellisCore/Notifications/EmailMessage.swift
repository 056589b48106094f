import Foundation

/// A notification as an email (RFC 5322 with MIME, RFC 2045): plain UTF-8 text in
/// quoted-printable, so every line is 7-bit and at most 76 characters whatever the server
/// offers; a header with other than short printable ASCII is written as RFC 2047 encoded words.
/// Line ends are CRLF.
public struct EmailMessage: Sendable {
    public var from: String
    public var to: String
    public var subject: String
    public var body: String
    public var date: Date
    /// Without the angle brackets: `id@domain`.
    public var messageID: String
    /// Headers after the standard ones, such as `X-Trellis-Event`, written as a subject is.
    public var extraHeaders: [(String, String)] = []

    public init(
        from: String, to: String, subject: String, body: String, date: Date, messageID: String,
        extraHeaders: [(String, String)] = []
    ) {
        (self.from, self.to, self.subject, self.body) = (from, to, subject, body)
        (self.date, self.messageID, self.extraHeaders) = (date, messageID, extraHeaders)
    }

    /// The message as it goes after DATA (before dot-stuffing).
    public var bytes: [UInt8] {
        var lines = [
            "From: Trellis <\(from)>", "To: \(to)", Self.header("Subject", subject), "Date: \(Self.date(date))",
            "Message-ID: <\(messageID)>", "MIME-Version: 1.0", "Content-Type: text/plain; charset=utf-8",
            "Content-Transfer-Encoding: quoted-printable", "Auto-Submitted: auto-generated"
        ]
        lines += extraHeaders.map { Self.header($0.0, $0.1) }
        return Array((lines.joined(separator: "\r\n") + "\r\n\r\n" + Self.quotedPrintable(body)).utf8)
    }

    /// `Name: value`, the value without control characters: as it is when it is printable ASCII
    /// that fits a line of 78 and holds no `=?`; otherwise as base64 encoded words of at most 30
    /// bytes of UTF-8 each (never splitting a character), one per folded line, each line under 76.
    public static func header(_ name: String, _ value: String) -> String {
        let clean = String(
            String.UnicodeScalarView(
                value.unicodeScalars.map { $0 == "\t" ? " " : $0 }.filter { $0.value >= 0x20 && $0.value != 0x7F }))
        let plain = clean.unicodeScalars.allSatisfy { $0.value < 0x7F }
        if plain, !clean.contains("=?"), name.count + 2 + clean.utf8.count <= 78 { return "\(name): \(clean)" }
        var words: [String] = []
        var chunk: [UInt8] = []
        for scalar in clean.unicodeScalars {
            let bytes = Array(String(scalar).utf8)
            if chunk.count + bytes.count > 30 {
                words.append(encodedWord(chunk))
                chunk = []
            }
            chunk += bytes
        }
        if !chunk.isEmpty || words.isEmpty { words.append(encodedWord(chunk)) }
        return "\(name): " + words.joined(separator: "\r\n ")
    }

    private static func encodedWord(_ bytes: [UInt8]) -> String {
        "=?utf-8?B?\(Data(bytes).base64EncodedString())?="
    }

    /// `text` in quoted-printable (RFC 2045 §6.7) with CRLF line ends: any line break becomes a
    /// hard one; `=`, control characters and non-ASCII bytes are `=XX`, as are a space or tab
    /// ending a line; a line longer than 76 is broken with soft breaks (`=` at the end).
    public static func quotedPrintable(_ text: String) -> String {
        let normalized = text.replacingOccurrences(of: "\r\n", with: "\n").replacingOccurrences(of: "\r", with: "\n")
        var out: [String] = []
        for line in normalized.split(separator: "\n", omittingEmptySubsequences: false) {
            let bytes = Array(line.utf8)
            var current = ""
            for (index, byte) in bytes.enumerated() {
                let last = index == bytes.count - 1
                let literal =
                    (byte >= 33 && byte <= 126 && byte != UInt8(ascii: "=")) || ((byte == 32 || byte == 9) && !last)
                let piece = literal ? String(UnicodeScalar(byte)) : "=" + hex(byte)
                if current.count + piece.count > 75 {
                    out.append(current + "=")
                    current = ""
                }
                current += piece
            }
            out.append(current)
        }
        return out.joined(separator: "\r\n")
    }

    private static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 15)]])
    }

    /// `date` as RFC 5322 writes it, in UTC: `Mon, 30 Nov 2026 06:19:46 +0000`.
    public static func date(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents([.weekday, .day, .month, .year, .hour, .minute, .second], from: date)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ value: Int?) -> String { (value ?? 0) < 10 ? "0\(value ?? 0)" : "\(value ?? 0)" }
        return "\(days[(parts.weekday ?? 1) - 1]), \(parts.day ?? 1) \(months[(parts.month ?? 1) - 1]) "
            + "\(parts.year ?? 1970) \(two(parts.hour)):\(two(parts.minute)):\(two(parts.second)) +0000"
    }

    /// A Message-ID that is the same for every attempt to send one notification (its channel and
    /// event key, FNV-1a, and when it was made), so a mail client shows a message sent again after
    /// a lost answer once: `<hash>.<milliseconds>@<domain of from>`.
    public static func messageID(channel: String, eventKey: String, created: Date, from: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in "\(channel)\n\(eventKey)".utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        let domain = from.split(separator: "@").last.map(String.init) ?? "trellis.invalid"
        let hex = String(hash, radix: 16)
        return
            "\(String(repeating: "0", count: 16 - hex.count) + hex).\(Int64(created.timeIntervalSince1970 * 1000))@\(domain)"
    }
}
