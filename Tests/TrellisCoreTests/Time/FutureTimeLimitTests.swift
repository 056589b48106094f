import Foundation
import Testing
import TrellisCore

/// The bound on the times messages state about themselves: a stated time more than the allowed
/// skew ahead of the time of receipt is refused, anything else (the past, a little ahead, none
/// stated) is accepted.
@Suite("A message's own time: no further ahead than the allowed skew")
struct FutureTimeLimitTests {
    static let now = Date(timeIntervalSince1970: 1_795_344_000)

    @Test(
        "judged against the time of receipt, with five minutes of skew by default",
        arguments: [
            (-86_400.0 * 365, true),
            (-1, true),
            (0, true),
            (60, true),
            (300, true),
            (300.001, false),
            (3_600, false)
        ])
    func defaultSkew(offset: TimeInterval, accepted: Bool) {
        let limit = FutureTimeLimit()
        #expect(limit.maxSkew == 300)
        #expect(limit.admits(Self.now.addingTimeInterval(offset), now: Self.now) == accepted)
    }

    @Test("a press dated 9999 is refused, by how far it lies ahead")
    func year9999() throws {
        let stated = try #require(ISO8601Time.parse("9999-01-01T00:00:00Z"))
        let verdict = FutureTimeLimit().judge(stated, now: Self.now)
        #expect(verdict == .tooFarAhead(by: stated.timeIntervalSince(Self.now)))
        #expect(FutureTimeLimit.reason == "future_time")
    }

    @Test("no stated time stands for the time of receipt and is accepted")
    func noTime() {
        #expect(FutureTimeLimit(maxSkew: 0).judge(nil, now: Self.now) == .accepted)
    }

    @Test("the skew is the setting's: 0 allows nothing ahead, a negative one counts as 0")
    func configured() {
        let none = FutureTimeLimit(maxSkew: 0)
        #expect(none.admits(Self.now, now: Self.now))
        #expect(!none.admits(Self.now.addingTimeInterval(0.001), now: Self.now))
        #expect(FutureTimeLimit(maxSkew: -5).maxSkew == 0)
        let hour = FutureTimeLimit(maxSkew: 3_600)
        #expect(hour.admits(Self.now.addingTimeInterval(3_000), now: Self.now))
        #expect(hour.latestAllowed(at: Self.now) == Self.now.addingTimeInterval(3_600))
    }
}
