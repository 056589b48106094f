import Testing
@testable import TrellisServer

@Suite("The watch for stuck message handling")
struct HandlingStallTests {
    let start = ContinuousClock.now

    @Test("holding nothing, or handling messages, is progress")
    func progress() {
        var stall = HandlingStall()
        #expect(stall.observe(held: 3, handled: 0, at: start) == .zero, "the first sample has nothing to compare with")
        #expect(stall.observe(held: 3, handled: 5, at: start + .seconds(30)) == .zero, "messages were handled")
        #expect(stall.observe(held: 0, handled: 5, at: start + .seconds(60)) == .zero, "nothing held")
        #expect(
            stall.observe(held: 2, handled: 5, at: start + .seconds(90)) == .zero,
            "held now, but not at the last sample: the message may have come a moment ago")
        #expect(stall.observe(held: 2, handled: 6, at: start + .seconds(95)) == .zero)
    }

    @Test("the same message held across samples is a stall measured from the last progress")
    func stalled() {
        var stall = HandlingStall()
        _ = stall.observe(held: 1, handled: 7, at: start)
        #expect(stall.observe(held: 1, handled: 7, at: start + .seconds(10)) == .seconds(10))
        #expect(
            stall.observe(held: 32, handled: 7, at: start + .seconds(70)) == .seconds(70),
            "more messages arriving behind the stuck one is no progress")
        #expect(stall.observe(held: 31, handled: 8, at: start + .seconds(71)) == .zero, "one handled ends the stall")
        #expect(stall.observe(held: 31, handled: 8, at: start + .seconds(75)) == .seconds(4))
    }
}
