import Foundation
import Testing
import TrellisCore

/// `trellis --version`: the version and the git commit the binary was built from.
@Suite("The version")
struct VersionTests {
    @Test("trellis --version prints the version and the commit")
    func versionLine() async throws {
        let result = try await TrellisBinary.run(["--version"])
        #expect(result.status == 0)
        #expect(result.output == "\(TrellisVersion.current) (commit \(TrellisVersion.commit))\n")
    }

    @Test("the commit is the checkout's HEAD (or unknown outside a git checkout)")
    func commitIsHead() throws {
        let head = Self.git(["rev-parse", "--short=12", "HEAD"])
        #expect(TrellisVersion.commit == (head ?? "unknown"))
        if head != nil {
            #expect(TrellisVersion.commit.count == 12 && TrellisVersion.commit.allSatisfy(\.isHexDigit))
        }
    }

    /// `git -C <repository root> arguments`'s output, trimmed; nil when git is missing or fails.
    static func git(_ arguments: [String]) -> String? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["git", "-C", MarkdownDocument.repositoryRoot.path] + arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { return nil }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { return nil }
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return text.isEmpty ? nil : text
    }
}
