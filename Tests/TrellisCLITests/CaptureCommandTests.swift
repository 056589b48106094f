import Foundation
import Testing

/// `trellis record` and `trellis replay` as a user meets them on the command line.
@Suite("record and replay on the command line")
struct CaptureCommandTests {
    @Test("record's usage names --broker as required, and leaving it out is refused")
    func recordNeedsBroker() async throws {
        let help = try await TrellisBinary.run(["record", "--help"])
        #expect(help.output.contains("USAGE: trellis record --broker <url>"), "\(help.output)")
        let missing = try await TrellisBinary.run(["record", "--count", "1"])
        #expect(missing.status != 0)
        #expect(missing.output.contains("--broker <url>"), "\(missing.output)")
    }

    @Test(
        "a capture that cannot be read is named, with the reason",
        arguments: [
            ("missing.jsonl", "cannot read the capture file missing.jsonl: no such file"),
            (".", "cannot read the capture file .: it is a directory")
        ])
    func unreadableCapture(file: String, expected: String) async throws {
        let result = try await TrellisBinary.run(["replay", file, "--offline"], in: temporaryDirectory())
        #expect(result.status == 1)
        #expect(result.output.contains(expected), "\(result.output)")
    }
}
