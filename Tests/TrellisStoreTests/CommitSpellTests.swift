import Testing
@testable import TrellisStore
import TrellisTestSupport

/// The spell of failing commits as a value: one error per kind and one recovery however the store
/// flaps, and the recovery only once commits have gone without a failure for the settle time.
@Suite("Commit spell")
struct CommitSpellTests {
    let start = ContinuousClock.now

    func at(_ seconds: Double) -> ContinuousClock.Instant { start + .milliseconds(Int(seconds * 1000)) }

    @Test("a failure, a success and the settle time: one error, one recovery with the spell's figures")
    func plainOutage() {
        var spell = CommitSpell(settle: .seconds(2))
        #expect(spell.failed(kind: "SQLITE_FULL", on: .writeBehind, at: at(0)) == .reportFailure(kind: "SQLITE_FULL"))
        #expect(spell.failed(kind: "SQLITE_FULL", on: .writeBehind, at: at(1)) == nil)
        #expect(spell.succeeded(on: .writeBehind, at: at(3)) == .checkSettled(after: .seconds(2)))
        #expect(spell.settleCheck(at: at(4.9)) == nil, "too early")
        #expect(spell.settleCheck(at: at(5)) == .reportRecovery(lasted: .seconds(3), failures: 2))
        #expect(!spell.isOpen)
        #expect(spell.settleCheck(at: at(9)) == nil, "a spell ends once")
    }

    @Test(
        "a store that flaps while partly back (a full disk's freed pages) is one outage: no second error, one recovery")
    func flapping() {
        var spell = CommitSpell(settle: .seconds(2))
        #expect(spell.failed(kind: "SQLITE_FULL", on: .writeBehind, at: at(0)) == .reportFailure(kind: "SQLITE_FULL"))
        #expect(spell.succeeded(on: .writeBehind, at: at(1)) == .checkSettled(after: .seconds(2)))
        #expect(spell.failed(kind: "SQLITE_FULL", on: .writeBehind, at: at(1.1)) == nil, "the kind was reported")
        #expect(spell.settleCheck(at: at(3)) == nil, "a failure came within the settle time")
        #expect(spell.succeeded(on: .writeBehind, at: at(4)) == .checkSettled(after: .seconds(2)))
        #expect(spell.failed(kind: "SQLITE_IOERR", on: .direct, at: at(4.5)) == .reportFailure(kind: "SQLITE_IOERR"))
        #expect(spell.succeeded(on: .direct, at: at(5)) == .checkSettled(after: .seconds(2)))
        #expect(spell.settleCheck(at: at(6)) == nil, "the check of the earlier success finds a newer one")
        #expect(spell.settleCheck(at: at(7)) == .reportRecovery(lasted: .seconds(5), failures: 3))
    }

    @Test("a success on one path does not end a spell while the other path fails")
    func bothPaths() {
        var spell = CommitSpell(settle: .seconds(2))
        _ = spell.failed(kind: "timeout", on: .writeBehind, at: at(0))
        #expect(spell.failed(kind: "timeout", on: .direct, at: at(1)) == nil)
        #expect(spell.succeeded(on: .direct, at: at(2)) == nil, "the write-behind still fails")
        #expect(spell.settleCheck(at: at(10)) == nil)
        #expect(spell.succeeded(on: .writeBehind, at: at(11)) == .checkSettled(after: .seconds(2)))
        #expect(spell.settleCheck(at: at(13)) == .reportRecovery(lasted: .seconds(11), failures: 2))
    }

    @Test("a success outside a spell, or a second success of a healthy path, asks for nothing")
    func quietWhenHealthy() {
        var spell = CommitSpell(settle: .seconds(2))
        #expect(spell.succeeded(on: .writeBehind, at: at(0)) == nil)
        _ = spell.failed(kind: "SQLITE_BUSY", on: .direct, at: at(1))
        #expect(spell.succeeded(on: .direct, at: at(2)) != nil)
        #expect(spell.succeeded(on: .direct, at: at(2.5)) == nil)
        #expect(spell.settleCheck(at: at(4)) == .reportRecovery(lasted: .seconds(1), failures: 1))
        #expect(
            spell.failed(kind: "SQLITE_BUSY", on: .direct, at: at(9)) == .reportFailure(kind: "SQLITE_BUSY"),
            "a new spell reports its kinds again")
    }

    @Test("closing ends a healthy spell at once; a spell still failing at close is not reported as over")
    func closing() {
        var spell = CommitSpell(settle: .seconds(2))
        _ = spell.failed(kind: "SQLITE_FULL", on: .writeBehind, at: at(0))
        #expect(spell.closing() == nil, "still failing")
        _ = spell.succeeded(on: .writeBehind, at: at(1))
        #expect(spell.closing() == .reportRecovery(lasted: .seconds(1), failures: 1))
        #expect(spell.settleCheck(at: at(5)) == nil, "ended once")
    }

    struct Failure: Error {}

    @Test("the driver: a recovery logged once the settle time passed, and at once when the store closes")
    func driver() async throws {
        let log = CapturedLog()
        let health = StoreWriteHealth(logger: log.logger, settle: .milliseconds(200))
        health.failed(Failure(), on: .writeBehind, unwritten: 3)
        health.succeeded(on: .writeBehind)
        health.failed(Failure(), on: .writeBehind, unwritten: 3)
        health.succeeded(on: .writeBehind)
        #expect(health.currentFailure == nil, "readiness follows each commit at once")
        try await eventually("the recovery is logged", timeout: .seconds(10)) {
            log.count(.notice, containing: "commits again") == 1
        }
        #expect(log.count(.error, containing: "cannot commit") == 1, "one outage, one error")

        health.failed(Failure(), on: .direct, unwritten: 0)
        health.succeeded(on: .direct)
        health.closing()
        #expect(log.count(.notice, containing: "commits again") == 2, "logged at the close, without the wait")
    }
}
