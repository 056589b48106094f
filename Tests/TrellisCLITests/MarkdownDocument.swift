import Foundation

/// A Markdown file of the repository (the README or a page under `docs/`), read the way GitHub
/// renders it as far as the documentation tests need: its links outside code, and the anchors
/// its headings get.
struct MarkdownDocument: CustomStringConvertible, Sendable {
    /// The path relative to the repository root, e.g. `docs/buttons.md`.
    let path: String
    let text: String

    var description: String { path }

    /// The repository root: three levels above this file (`Tests/TrellisCLITests/…`).
    static let repositoryRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Reads `path` (relative to the repository root).
    init(path: String) throws {
        self.path = path
        self.text = try String(contentsOf: Self.repositoryRoot.appendingPathComponent(path), encoding: .utf8)
    }

    /// `README.md` and every Markdown page under `docs/`, sorted.
    static func all() -> [String] {
        let docs =
            (try? FileManager.default.contentsOfDirectory(atPath: repositoryRoot.appendingPathComponent("docs").path))
            ?? []
        return ["README.md"] + docs.filter { $0.hasSuffix(".md") }.sorted().map { "docs/" + $0 }
    }

    /// The lines outside fenced code blocks, with inline code spans blanked out.
    var proseLines: [String] {
        var inFence = false
        var lines: [String] = []
        for line in text.components(separatedBy: "\n") {
            if line.trimmingCharacters(in: .whitespaces).hasPrefix("```") {
                inFence.toggle()
                continue
            }
            if !inFence { lines.append(Self.withoutCodeSpans(line)) }
        }
        return lines
    }

    /// Every link target `[text](target)` outside code.
    var links: [String] {
        let pattern = /\]\(([^)\s]+)\)/
        return proseLines.flatMap { line in line.matches(of: pattern).map { String($0.output.1) } }
    }

    /// The anchors GitHub gives the headings, in order; a repeated heading gets `-1`, `-2`, ….
    var anchors: Set<String> {
        var seen: [String: Int] = [:]
        var result: Set<String> = []
        for line in proseLines {
            guard let match = line.firstMatch(of: /^#{1,6}\s+(.*?)\s*#*\s*$/) else { continue }
            let slug = Self.slug(String(match.output.1))
            let count = seen[slug, default: 0]
            seen[slug] = count + 1
            result.insert(count == 0 ? slug : "\(slug)-\(count)")
        }
        return result
    }

    /// GitHub's heading anchor: lower case, punctuation other than `-` and `_` dropped, each space a `-`.
    static func slug(_ heading: String) -> String {
        let plain = heading.replacingOccurrences(of: "`", with: "")
            .replacingOccurrences(of: #"\[([^\]]*)\]\([^)]*\)"#, with: "$1", options: .regularExpression)
        var slug = ""
        for character in plain.lowercased() {
            if character == " " {
                slug.append("-")
            } else if character == "-" || character == "_" || character.isLetter || character.isNumber {
                slug.append(character)
            }
        }
        return slug
    }

    /// `line` with every inline code span replaced by spaces, so nothing in code reads as a link.
    private static func withoutCodeSpans(_ line: String) -> String {
        line.replacing(/`[^`]*`/) { String(repeating: " ", count: $0.output.count) }
    }
}
