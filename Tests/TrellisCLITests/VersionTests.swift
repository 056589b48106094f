import Foundation
import Testing
import TrellisTestSupport
import TrellisCore

@testable import trellis

/// `trellis --version`: the version, which CHANGELOG.md's first entry and the Debian package share, and
/// the git commit the binary was built from.
@Suite("The version")
struct VersionTests {
    @Test("trellis --version prints the version and the commit")
    func versionLine() throws {
        #expect(TrellisCommand.configuration.version == "\(TrellisVersion.current) (commit \(TrellisVersion.commit))")
        // `--version` is answered with that line and exit status 0, as ArgumentParser answers it.
        do {
            _ = try TrellisCommand.parseAsRoot(["--version"])
            Issue.record("--version parsed as a command")
        } catch {
            #expect(TrellisCommand.fullMessage(for: error) == TrellisVersion.description)
            #expect(TrellisCommand.exitCode(for: error) == .success)
        }
    }

    @Test("the commit is the checkout's HEAD (or unknown outside a git checkout)")
    func commitIsHead() throws {
        let head = Self.git(["rev-parse", "--short=12", "HEAD"])
        #expect(TrellisVersion.commit == (head ?? "unknown"))
        if head != nil {
            #expect(TrellisVersion.commit.count == 12 && TrellisVersion.commit.allSatisfy(\.isHexDigit))
        }
    }

    @Test(
        "CHANGELOG.md's first entry after `## Unreleased` is this version, in the form `## VERSION (YYYY-MM-DD)` packaging reads"
    )
    func changelogNamesTheVersion() throws {
        let changelog = try String(
            contentsOf: MarkdownDocument.repositoryRoot.appendingPathComponent("CHANGELOG.md"), encoding: .utf8)
        // `## Unreleased` gathers the changes since; packaging skips it, as this does.
        let first = try #require(
            changelog.split(separator: "\n").first { $0.hasPrefix("## ") && $0 != "## Unreleased" })
        let pattern = #/^## (\S+) \(\d{4}-\d{2}-\d{2}\)$/#
        let match = try #require(String(first).wholeMatch(of: pattern), "CHANGELOG.md's first entry reads \(first)")
        #expect(String(match.1) == TrellisVersion.current)
    }

    /// `git -C <repository root> arguments`'s output, trimmed; nil when git is missing or fails.
    static func git(_ arguments: [String]) -> String? { Repository.git(arguments) }
}
