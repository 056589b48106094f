import Foundation
import Testing
import TrellisCore

/// Which backups may start: one at a time, requests at most one per interval, the schedule never
/// rate-limited; refusals say why and when to ask again.
@Suite("Backups: one at a time, requests rate-limited")
struct BackupAdmissionTests {
    static let t0 = Date(timeIntervalSince1970: 1_795_744_200)

    @Test("a request while a backup is written is busy, not queued; once it ended, the next may start")
    func singleFlight() {
        var admission = BackupAdmission(minimumRequestInterval: 0)
        #expect(admission.begin(.schedule, at: Self.t0) == .start)
        let running = BackupAdmission.Running(trigger: .schedule, started: Self.t0)
        #expect(admission.begin(.request, at: Self.t0.addingTimeInterval(1)) == .busy(running))
        #expect(admission.begin(.schedule, at: Self.t0.addingTimeInterval(1)) == .busy(running))
        #expect(admission.lastRequest == nil, "a refused request is not counted as asked for")
        admission.finish()
        #expect(admission.begin(.request, at: Self.t0.addingTimeInterval(2)) == .start)
        #expect(admission.running == BackupAdmission.Running(trigger: .request, started: Self.t0.addingTimeInterval(2)))
    }

    @Test("requests: at most one per interval, counted from the start of the last, the schedule unaffected")
    func rateLimited() {
        var admission = BackupAdmission(minimumRequestInterval: 60)
        #expect(admission.begin(.request, at: Self.t0) == .start)
        admission.finish()
        let next = Self.t0.addingTimeInterval(60)
        for seconds in [0.5, 1, 30, 59.999] {
            #expect(
                admission.begin(.request, at: Self.t0.addingTimeInterval(seconds))
                    == .tooSoon(last: Self.t0, next: next))
        }
        #expect(
            admission.begin(.schedule, at: Self.t0.addingTimeInterval(10)) == .start, "the schedule is not rate-limited"
        )
        admission.finish()
        #expect(admission.lastRequest == Self.t0)
        #expect(admission.begin(.request, at: next) == .start)
    }

    @Test("deciding changes nothing")
    func decideOnly() {
        let admission = BackupAdmission()
        #expect(admission.decide(.request, at: Self.t0) == .start)
        #expect(admission.running == nil && admission.lastRequest == nil)
    }

    @Test("the refusals say why, and when the next request is allowed")
    func refusals() throws {
        #expect(BackupAdmissionDecision.start.refusal == nil)
        let busy = try #require(BackupAdmissionDecision.busy(.init(trigger: .schedule, started: Self.t0)).refusal)
        #expect(busy == "a scheduled backup is being written since 2026-11-27T01:50:00.000Z; ask again once it is done")
        let soon = try #require(
            BackupAdmissionDecision.tooSoon(last: Self.t0, next: Self.t0.addingTimeInterval(60)).refusal)
        #expect(
            soon == "a backup was asked for at 2026-11-27T01:50:00.000Z and at most one is taken every 60 s;"
                + " the next may be asked for from 2026-11-27T01:51:00.000Z")
    }
}
