import Foundation
import Testing
import TrellisCore

/// ``FailureSpells``: a failing operation tried again and again is logged at its first failure, once
/// an interval after, and at its end.
@Suite("Failure spells")
struct FailureSpellsTests {
    let start = Date(timeIntervalSince1970: 2_000_000)

    @Test("the first failure is told, the next ones an interval later with their number, the end with the total")
    func spell() {
        var spells = FailureSpells(interval: 60)
        #expect(spells.failed("read", at: start) == .first)
        // Ten a second for half a minute: nothing.
        for tenth in 1...300 { #expect(spells.failed("read", at: start.addingTimeInterval(Double(tenth) / 10)) == nil) }
        #expect(spells.failed("read", at: start.addingTimeInterval(60)) == .again(unlogged: 300))
        #expect(spells.failed("read", at: start.addingTimeInterval(61)) == nil)
        #expect(spells.succeeded("read") == 303)
        #expect(spells.succeeded("read") == nil)
        // A new spell is told at once, however soon after the last.
        #expect(spells.failed("read", at: start.addingTimeInterval(62)) == .first)
    }

    @Test("operations have spells of their own; a clock stepped back does not hold a line back")
    func apart() {
        var spells = FailureSpells(interval: 60)
        #expect(spells.failed("read", at: start) == .first)
        #expect(spells.failed("delete", at: start.addingTimeInterval(1)) == .first)
        #expect(spells.succeeded("delete") == 1)
        #expect(spells.failed("read", at: start.addingTimeInterval(-3600)) == .again(unlogged: 0))
        #expect(spells.succeeded("read") == 2)
    }
}
