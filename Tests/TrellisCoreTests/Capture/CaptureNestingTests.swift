import Testing
@testable import TrellisCore

@Suite("Capture lines nested too deep")
struct CaptureNestingTests {
    @Test("a line nested 100,000 levels deep is refused, not a stack overflow", arguments: ["[", "{\"a\":"])
    func deepNesting(opener: String) {
        let line =
            "{\"t\":\"2026-11-22T10:41:05.000000Z\",\"topic\":\"x\",\"payload\":"
            + String(repeating: opener, count: 100_000)
        guard case let .failure(error) = CaptureRecord.decode(line: line) else {
            Issue.record("a hostile line was accepted")
            return
        }
        #expect("\(error)".contains("nested more than 64 levels"))
    }
}
