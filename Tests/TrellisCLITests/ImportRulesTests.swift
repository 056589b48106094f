import Foundation
import Testing

/// The layering of docs/architecture.md ("What each room may import") holds: every `import` of a
/// project module in `Sources/` is one the table allows its target, or its file.
@Suite("Import rules")
struct ImportRulesTests {
    /// The table's rows: target → (modules allowed everywhere in it, module → the files alone allowed it).
    static func rules() throws -> [String: (modules: Set<String>, onlyIn: [String: Set<String>])] {
        let page = try MarkdownDocument(path: "docs/architecture.md")
        let start = try #require(page.text.range(of: "### What each room may import"))
        var rules: [String: (modules: Set<String>, onlyIn: [String: Set<String>])] = [:]
        for line in page.text[start.upperBound...].split(separator: "\n") {
            guard line.hasPrefix("| `") else {
                if !rules.isEmpty && !line.hasPrefix("|") { break }
                continue
            }
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            let target = cells[0].trimmingCharacters(in: CharacterSet(charactersIn: "`"))
            let allowed = cells[1]
            if allowed == "any" { rules[target] = (["*"], [:]); continue }
            // "… and `X` in `a.swift`, `b.swift` … alone": X allowed in those files only.
            var everywhere = allowed, onlyIn: [String: Set<String>] = [:]
            if let range = allowed.range(of: ", and `") {
                everywhere = String(allowed[..<range.lowerBound])
                let rest = allowed[range.upperBound...]
                let module = String(rest.prefix { $0 != "`" })
                onlyIn[module] = Set(
                    Self.codeSpans(String(rest.dropFirst(module.count + 1))).filter { $0.hasSuffix(".swift") })
            }
            rules[target] = (Set(Self.codeSpans(everywhere)), onlyIn)
        }
        return rules
    }

    static func codeSpans(_ text: String) -> [String] {
        text.split(separator: "`", omittingEmptySubsequences: false).enumerated().filter { $0.offset % 2 == 1 }.map {
            String($0.element)
        }
    }

    @Test("every import of a project module is allowed by docs/architecture.md")
    func imports() throws {
        let root = MarkdownDocument.repositoryRoot.appendingPathComponent("Sources")
        let targets = try FileManager.default.contentsOfDirectory(atPath: root.path).filter { !$0.hasPrefix(".") }
        let rules = try Self.rules()
        var broken: [String] = []
        for target in targets.sorted() {
            let rule = try #require(rules[target], "docs/architecture.md has no import rule for \(target)")
            let directory = root.appendingPathComponent(target)
            let files =
                FileManager.default.enumerator(atPath: directory.path)?.compactMap { $0 as? String }.filter {
                    $0.hasSuffix(".swift")
                } ?? []
            for file in files {
                let text = try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
                for line in text.split(separator: "\n") where line.contains("import ") {
                    let words = line.split(separator: " ")
                    guard let index = words.firstIndex(of: "import"), index + 1 < words.count,
                        words[..<index].allSatisfy({ $0.hasPrefix("@") })
                    else { continue }
                    let module = String(words[index + 1])
                    guard targets.contains(module), module != target, !rule.modules.contains("*") else { continue }
                    if rule.modules.contains(module) { continue }
                    if let files = rule.onlyIn[module], files.contains(file) { continue }
                    broken.append("\(target)/\(file) imports \(module)")
                }
            }
        }
        #expect(broken.isEmpty, "imports across the rules of docs/architecture.md:\n\(broken.joined(separator: "\n"))")
    }

    @Test("the rules are read: a handler importing the client would be caught")
    func readsTheTable() throws {
        let relay = try #require(try Self.rules()["TrellisRelay"])
        #expect(relay.modules == ["TrellisCore", "TrellisMQTTTypes", "TrellisStore"])
        #expect(
            relay.onlyIn["TrellisMQTT"] == [
                "Relay/RelayService.swift", "Relay/MessageOutlet.swift", "Relay/RetainedStateReconciler.swift",
                "Replay/LiveReplay.swift"
            ])
        #expect(try Self.rules()["TrellisMQTTTypes"]?.modules.isEmpty == true)
    }

    /// The types `Sources/trellis` may declare besides its commands: helpers of parsing (the flags
    /// derived from the settings table) and of printing what a command read or wrote.
    static let commandHelpers: Set<String> = [
        "SettingFlag", "SettingFlagValue", "OptionalSettingFlagValue", "SettingFlags", "ExitCodeError", "LineSink",
        "CaptureInput", "RecordingProgress"
    ]

    @Test(
        "Sources/trellis holds commands only: every type it declares is a command or its options, or a helper named here"
    )
    func commandsOnly() throws {
        let directory = MarkdownDocument.repositoryRoot.appendingPathComponent("Sources/trellis")
        let files =
            FileManager.default.enumerator(atPath: directory.path)?.compactMap { $0 as? String }.filter {
                $0.hasSuffix(".swift")
            } ?? []
        #expect(files.count > 10)
        let declaration =
            /^(?:package |public |private |fileprivate )?(?:final )?(?:struct|enum|class|actor|protocol|typealias) (\w+)([^{=]*)/
        var others: [String] = []
        var commands = 0
        for file in files {
            let text = try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
            for line in text.split(separator: "\n") {
                guard let match = String(line).firstMatch(of: declaration) else { continue }
                let name = String(match.1), conformances = String(match.2)
                if conformances.contains("ParsableCommand") || conformances.contains("ParsableArguments") {
                    commands += 1
                } else if !Self.commandHelpers.contains(name) {
                    others.append("\(file): \(name)")
                }
            }
        }
        #expect(commands >= 12, "the commands were not found")
        #expect(
            others.isEmpty,
            "declared in the executable, which holds commands only (move it to TrellisApplication or below): \(others)")
    }
}
