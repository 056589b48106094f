import Foundation
import Testing
import TrellisApplication

@testable import trellis

/// The README and the pages under `docs/`: every relative link leads somewhere, the index lists
/// every page, the front page stays short, and the configuration page names every key.
@Suite("Documentation")
struct DocsTests {
    @Test("every relative link resolves, anchors included", arguments: MarkdownDocument.all())
    func linksResolve(path: String) throws {
        let document = try MarkdownDocument(path: path)
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().relativePath
        for link in document.links where !link.contains("://") && !link.hasPrefix("mailto:") {
            let parts = link.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            let file = parts[0]
            let target = file.isEmpty ? path : Self.normalized(directory == "." ? file : directory + "/" + file)
            let url = MarkdownDocument.repositoryRoot.appendingPathComponent(target)
            guard FileManager.default.fileExists(atPath: url.path) else {
                Issue.record("\(path): the link \(link) leads to \(target), which does not exist")
                continue
            }
            if parts.count == 2, target.hasSuffix(".md") {
                let anchors = try MarkdownDocument(path: target).anchors
                #expect(anchors.contains(parts[1]), "\(path): \(target) has no heading with the anchor #\(parts[1])")
            }
        }
    }

    @Test("the docs index links every page under docs/")
    func indexListsEveryPage() throws {
        let index = try MarkdownDocument(path: "docs/README.md")
        let linked = Set(index.links.map { String($0.split(separator: "#").first ?? "") })
        let pages = MarkdownDocument.all().filter { $0.hasPrefix("docs/") && $0 != "docs/README.md" }
        #expect(pages.count >= 12)
        for page in pages {
            #expect(linked.contains(String(page.dropFirst("docs/".count))), "docs/README.md does not list \(page)")
        }
    }

    @Test("the README stays a front page: at most 250 lines, with the two commands and the reference index")
    func readmeIsShort() throws {
        let readme = try MarkdownDocument(path: "README.md")
        let lines = readme.text.filter { $0 == "\n" }.count
        #expect(lines <= 250, "README.md has \(lines) lines")
        #expect(readme.text.contains("make run"))
        #expect(readme.text.contains("make test"))
        #expect(readme.links.contains("docs/README.md"))
    }

    @Test("docs/configuration.md documents every key of `trellis config example`, with its environment variable")
    func configurationPageHasEveryKey() throws {
        let example = ExampleConfiguration.text
        let keys = Self.keys(ofExample: example)
        #expect(keys.count >= 20, "found only \(keys) in: \(example)")
        let page = try MarkdownDocument(path: "docs/configuration.md").text
        for key in keys {
            let environment = "TRELLIS_" + key.uppercased().replacingOccurrences(of: ".", with: "_")
            #expect(
                page.contains("| `\(key)` | `\(environment)` |"), "docs/configuration.md lacks the table row of \(key)")
            #expect(
                page.contains("- `\(key)`") || page.contains(", `\(key)`"),
                "docs/configuration.md does not describe \(key)")
        }
    }

    @Test("`trellis --help` points to the reference in docs/")
    func helpPointsToDocs() {
        let help = TrellisCommand.helpMessage()
        #expect(help.contains("docs/README.md"), "trellis --help: \(help)")
    }

    /// The dotted keys of a configuration file in the example's shape: sections at the left
    /// margin, nested mappings (`tls:` under `broker:`) and their keys indented by two spaces a level.
    static func keys(ofExample text: String) -> [String] {
        var path: [String] = []
        var keys: [String] = []
        for line in text.components(separatedBy: "\n") where line.contains(":") {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            guard !trimmed.hasPrefix("#") else { continue }
            let depth = (line.count - line.drop(while: { $0 == " " }).count) / 2
            let parts = trimmed.split(separator: ":", maxSplits: 1)
            let name = String(parts[0])
            path = Array(path.prefix(depth))
            if parts.count == 1 || parts[1].trimmingCharacters(in: .whitespaces).isEmpty {
                path.append(name)
            } else {
                keys.append((path + [name]).joined(separator: "."))
            }
        }
        return keys
    }

    /// `path` with `.` and `..` segments resolved, relative to the repository root.
    static func normalized(_ path: String) -> String {
        var segments: [Substring] = []
        for segment in path.split(separator: "/") {
            switch segment {
            case ".": continue
            case "..": if !segments.isEmpty { segments.removeLast() }
            default: segments.append(segment)
            }
        }
        return segments.joined(separator: "/")
    }
}
