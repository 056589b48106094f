import Foundation

/// The two-minute tour of the README: the commands of its `sh` blocks between `<!-- tour -->`
/// and `<!-- end:tour -->`, each with the lines the README says it prints (the `# ` lines
/// right after it, where `…` stands for any text).
struct ReadmeTour {
    struct Step: CustomStringConvertible {
        /// The command as the README shows it (continuation lines joined).
        var command: String
        /// The lines it prints, in order.
        var expected: [String]

        var description: String { command }

        /// The command aimed at the broker on `port`: `-p PORT` after every `-h 127.0.0.1`, and a
        /// timeout (`-W`) for every mosquitto_sub or mosquitto_rr, so a missing answer fails
        /// the step instead of hanging it.
        func command(port: Int, timeoutSeconds: Int) -> String {
            var result = command.replacingOccurrences(of: "-h 127.0.0.1", with: "-h 127.0.0.1 -p \(port)")
            for tool in ["mosquitto_sub", "mosquitto_rr"] where result.hasPrefix(tool + " ") {
                result = tool + " -W \(timeoutSeconds)" + result.dropFirst(tool.count)
            }
            return result
        }

        /// Whether `output` is exactly the expected lines.
        func matches(_ output: String) -> Bool {
            let lines = output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            let printed = lines.last == "" ? Array(lines.dropLast()) : lines
            guard printed.count == expected.count else { return false }
            return zip(printed, expected).allSatisfy { line, pattern in Self.line(line, matches: pattern) }
        }

        /// `pattern` with `…` matching any text, the rest literally.
        static func line(_ line: String, matches pattern: String) -> Bool {
            let parts = pattern.components(separatedBy: "…").map(NSRegularExpression.escapedPattern(for:))
            let regex = "^" + parts.joined(separator: ".*") + "$"
            return line.range(of: regex, options: .regularExpression) != nil
        }
    }

    var steps: [Step]

    /// Reads the tour from `markdown`; throws when it has no tour.
    init(markdown: String) throws {
        guard let start = markdown.range(of: "<!-- tour -->"),
            let end = markdown.range(of: "<!-- end:tour -->", range: start.upperBound..<markdown.endIndex)
        else {
            throw TourError(message: "the README has no <!-- tour --> … <!-- end:tour --> section")
        }
        var steps: [Step] = []
        var inBlock = false
        var pending = ""
        for line in markdown[start.upperBound..<end.lowerBound].components(separatedBy: "\n") {
            if line.hasPrefix("```") {
                inBlock = line == "```sh"
                continue
            }
            guard inBlock, !line.isEmpty else { continue }
            if line.hasPrefix("# ") {
                guard !steps.isEmpty else { throw TourError(message: "expected output before any command: \(line)") }
                steps[steps.count - 1].expected.append(String(line.dropFirst(2)))
            } else if line.hasSuffix("\\") {
                pending += line.dropLast().trimmingCharacters(in: .whitespaces) + " "
            } else {
                steps.append(Step(command: pending + line.trimmingCharacters(in: .whitespaces), expected: []))
                pending = ""
            }
        }
        self.steps = steps
    }

    struct TourError: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }
}
