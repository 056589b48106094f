import Foundation
import Testing
import TrellisApplication
@testable import trellis

/// `trellis record` and `trellis replay` as a user meets them on the command line: their usage and
/// refusals, parsed in-process as the binary parses them (`ReplayFixtureTests` and the capture import's
/// golden test run replays end to end).
@Suite("record and replay on the command line")
struct CaptureCommandTests {
    /// The message `trellis ARGUMENTS` is refused with as the binary parses them; an issue (and an
    /// empty message) when they parse.
    static func parseRefusal(_ arguments: [String]) -> String {
        do {
            _ = try TrellisCommand.parseAsRoot(arguments)
            Issue.record("\(arguments) parsed")
            return ""
        } catch {
            return TrellisCommand.message(for: error)
        }
    }

    @Test("record's usage names --broker as required, and leaving it out is refused")
    func recordNeedsBroker() {
        let help = TrellisCommand.helpMessage(for: RecordCommand.self)
        #expect(help.contains("USAGE: trellis record --broker <url>"), "\(help)")
        let message = Self.parseRefusal(["record", "--count", "1"])
        #expect(message.contains("--broker <url>"), "\(message)")
    }

    @Test("a capture that cannot be read is named, with the reason")
    func unreadableCapture() throws {
        let missing = temporaryDirectory() + "/missing.jsonl"
        for (file, expected) in [
            (missing, "cannot read the capture file \(missing): no such file"),
            (temporaryDirectory(), "it is a directory")
        ] {
            let error = #expect(throws: CommandFailure.self) { try CaptureInput.read(file, skipBadLines: false) }
            #expect(error?.description.contains(expected) == true, "\(error?.description ?? "")")
        }
        // And `replay` takes a capture file as its argument, offline too.
        let replay = try #require(try TrellisCommand.parseAsRoot(["replay", missing, "--offline"]) as? ReplayCommand)
        #expect(replay.file == missing && replay.offline)
    }
}
