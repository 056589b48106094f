/// One event as a line of `trellis watch`: the time, the service, who sent it, what it said, the
/// verdict and what was answered, linked by an arrow; in colour for a terminal. The line is
/// meant for people; `--json` gives the event itself.
public enum WatchLine {
    /// ANSI colours, by what they mark.
    enum Colour: String {
        case dim = "\u{1B}[2m"
        case green = "\u{1B}[32m"
        case yellow = "\u{1B}[33m"
        case red = "\u{1B}[31m"
        case magenta = "\u{1B}[35m"
        case bold = "\u{1B}[1m"
        static let reset = "\u{1B}[0m"
    }

    /// The line (and a line per reply, indented, each after `↳`) for `event`.
    public static func render(_ event: WatchEvent, colour: Bool) -> String {
        func paint(_ text: String, _ mark: Colour) -> String { colour ? mark.rawValue + text + Colour.reset : text }
        // HH:MM:SS.mmm of the ISO time: the date is the same for a whole session.
        let time = event.at.split(separator: "T").last.map { String($0.dropLast()) } ?? event.at
        // Every value but the verdict's words comes from whoever published: each is sanitized.
        let who = event.client.map { " " + sanitized($0) } ?? ""
        var line =
            paint(sanitized(time), .dim) + " " + paint(sanitized(event.service), .bold) + paint(who, .magenta) + "  "
        line += sanitized(event.summary)
        let verdict = event.reason.map { "\(event.verdict.rawValue) \(sanitized($0))" } ?? event.verdict.rawValue
        let mark: Colour =
            switch event.verdict {
            case .answered, .handled: .green
            case .error, .muted: .yellow
            case .deadLettered: .red
            }
        line += "  → " + paint(verdict, mark)
        line += "  " + paint("[\(sanitized(event.relay)) #\(event.seq)]", .dim)
        for reply in event.replies {
            line += "\n    ↳ " + paint(sanitized(reply.topic), .dim) + "  " + sanitized(reply.summary)
        }
        return line
    }

    /// `text` with escape and other control characters (C0 and C1, and the bidirectional overrides)
    /// shown as `?`: a payload, a topic or a sender's name must not drive the terminal.
    static func sanitized(_ text: String) -> String { replacingControls(in: text, with: "?") }

    /// `text` with each control character and bidirectional override replaced by `mark`.
    static func replacingControls(in text: some StringProtocol, with mark: Character) -> String {
        String(
            text.unicodeScalars.map { scalar in
                scalar.properties.generalCategory == .control || (0x202A...0x202E).contains(scalar.value)
                    || (0x2066...0x2069).contains(scalar.value) ? mark : Character(scalar)
            })
    }
}
