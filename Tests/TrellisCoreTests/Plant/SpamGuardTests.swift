import Testing
@testable import TrellisCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

@Suite("SpamGuard")
struct SpamGuardTests {
    @Test("defaults are 15 messages per 15 seconds")
    func defaults() {
        let guardian = SpamGuard()
        #expect(guardian.limit == 15)
        #expect(guardian.window == 15)
        #expect(guardian.trackedSenders == 0)
    }

    @Test("the 16th message is kicked once, later ones muted, allowed again after the window")
    func kickThenMuteThenAllow() {
        var guardian = SpamGuard()
        let verdicts = (0..<18).map { guardian.admit(sender: "Bob", at: at(Double($0) * 0.1)) }
        #expect(verdicts == Array(repeating: .allowed, count: 15) + [.kicked, .muted, .muted])
        #expect(guardian.admit(sender: "Bob", at: at(10)) == .muted)
        #expect(guardian.admit(sender: "Bob", at: at(25.1)) == .allowed)
        #expect(guardian.admit(sender: "Bob", at: at(25.2)) == .allowed)
    }

    @Test("a grant lets that many messages pass uncounted, then they count again")
    func allowance() {
        var guardian = SpamGuard(limit: 3, window: 10)
        #expect(guardian.admit(sender: "Bob", at: at(0)) == .allowed)
        guardian.grant(sender: "Bob", count: 7)
        let free = (1...7).map { guardian.admit(sender: "Bob", at: at(Double($0) * 0.1), usingAllowance: true) }
        #expect(free == Array(repeating: .allowed, count: 7))
        // Only the first message counted: two more fit, the next is kicked.
        #expect(guardian.admit(sender: "Bob", at: at(1), usingAllowance: true) == .allowed)
        #expect(guardian.admit(sender: "Bob", at: at(1.1), usingAllowance: true) == .allowed)
        #expect(guardian.admit(sender: "Bob", at: at(1.2), usingAllowance: true) == .kicked)
    }

    @Test("a new grant replaces what was left; no grant, no allowance; a kicked sender cannot use one")
    func allowanceIsBounded() {
        var guardian = SpamGuard(limit: 2, window: 10)
        #expect(guardian.admit(sender: "Eve", at: at(0), usingAllowance: true) == .allowed)
        #expect(guardian.admit(sender: "Eve", at: at(0.1), usingAllowance: true) == .allowed)
        #expect(guardian.admit(sender: "Eve", at: at(0.2), usingAllowance: true) == .kicked)
        guardian.grant(sender: "Eve", count: 5)
        #expect(guardian.admit(sender: "Eve", at: at(0.3), usingAllowance: true) == .muted)
        guardian.grant(sender: "Nobody", count: 5)
        #expect(guardian.trackedSenders == 1)
        #expect(guardian.admit(sender: "Ann", at: at(0)) == .allowed)
        guardian.grant(sender: "Ann", count: 3)
        guardian.grant(sender: "Ann", count: 1)
        #expect(guardian.admit(sender: "Ann", at: at(0.1), usingAllowance: true) == .allowed)
        #expect(guardian.admit(sender: "Ann", at: at(0.2), usingAllowance: true) == .allowed)
        #expect(guardian.admit(sender: "Ann", at: at(0.3), usingAllowance: true) == .kicked)
    }

    @Test("a new burst after recovering is kicked again")
    func kickedAgainAfterRecovery() {
        var guardian = SpamGuard(limit: 2, window: 1)
        #expect(guardian.admit(sender: "Bob", at: at(0)) == .allowed)
        #expect(guardian.admit(sender: "Bob", at: at(0.1)) == .allowed)
        #expect(guardian.admit(sender: "Bob", at: at(0.2)) == .kicked)
        #expect(guardian.admit(sender: "Bob", at: at(0.3)) == .muted)
        #expect(guardian.admit(sender: "Bob", at: at(5)) == .allowed)
        #expect(guardian.admit(sender: "Bob", at: at(5.1)) == .allowed)
        #expect(guardian.admit(sender: "Bob", at: at(5.2)) == .kicked)
    }

    @Test("a steady sender at the limit is never kicked")
    func steadyRate() {
        var guardian = SpamGuard()
        let verdicts = (0..<100).map { guardian.admit(sender: "Bob", at: at(Double($0))) }
        #expect(verdicts.allSatisfy { $0 == .allowed })
    }

    @Test("messages exactly one window old no longer count")
    func windowBoundary() {
        var guardian = SpamGuard(limit: 2, window: 10)
        #expect(guardian.admit(sender: "Bob", at: at(0)) == .allowed)
        #expect(guardian.admit(sender: "Bob", at: at(5)) == .allowed)
        #expect(guardian.admit(sender: "Bob", at: at(10)) == .allowed)
        #expect(guardian.admit(sender: "Bob", at: at(14.9)) == .kicked)
    }

    @Test("senders are counted independently")
    func independentSenders() {
        var guardian = SpamGuard(limit: 3, window: 15)
        for i in 0..<3 {
            #expect(guardian.admit(sender: "Bob's iPhone", at: at(Double(i))) == .allowed)
        }
        #expect(guardian.admit(sender: "Bob's iPhone", at: at(3)) == .kicked)
        #expect(guardian.admit(sender: "Zoë 📱", at: at(3)) == .allowed)
        #expect(guardian.admit(sender: "bob's iphone", at: at(3)) == .allowed)
        #expect(guardian.trackedSenders == 3)
    }

    @Test("interleaved senders, added and pruned between them, each get the verdicts they would get alone")
    func interleavedSendersAsAlone() {
        // 60 senders, so the table grows (and moves every state) several times while one sender is
        // the last admitted; a pause of more than a window prunes the idle ones midway.
        var shared = SpamGuard(limit: 4, window: 15)
        var alone: [String: SpamGuard] = [:]
        // A fixed sequence (a linear congruential generator), so a failure can be run again.
        var state: UInt64 = 2026
        func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int(state >> 33) % bound
        }
        var time = 0.0
        var sender = "sender 0"
        for step in 0..<3000 {
            time += step == 1500 ? 20 : Double(next(4)) / 10
            // Runs of one sender, as one client's requests come, between switches to another.
            if next(4) == 0 { sender = "sender \(next(60))" }
            // Now and then a grant of none to a sender that may be unknown: it must not move a state.
            if step % 97 == 0 { shared.grant(sender: "sender \(next(120))", count: 0) }
            let verdict = shared.admit(sender: sender, at: at(time))
            #expect(
                verdict == alone[sender, default: SpamGuard(limit: 4, window: 15)].admit(sender: sender, at: at(time)),
                "step \(step), \(sender)")
        }
        #expect(shared.trackedSenders <= 60)
    }

    @Test("a grant to a sender not tracked changes nothing for the sender admitted last")
    func grantToUnknownSender() {
        var guardian = SpamGuard(limit: 2, window: 15)
        for sender in ["x", "y", "z"] { #expect(guardian.admit(sender: sender, at: at(0)) == .allowed) }
        guardian.grant(sender: "nobody", count: 5)
        #expect(guardian.trackedSenders == 3)
        #expect(guardian.admit(sender: "z", at: at(1)) == .allowed)
        #expect(guardian.admit(sender: "z", at: at(2)) == .kicked)
        #expect(guardian.admit(sender: "x", at: at(2)) == .allowed)
    }

    @Test("memory is bounded: idle senders are pruned")
    func pruning() {
        var guardian = SpamGuard()
        for i in 0..<1000 {
            _ = guardian.admit(sender: "client-\(i)", at: at(0))
        }
        #expect(guardian.trackedSenders == 1000)
        _ = guardian.admit(sender: "late", at: at(14))
        #expect(guardian.trackedSenders == 1001)
        _ = guardian.admit(sender: "later", at: at(15.5))
        #expect(guardian.trackedSenders == 2)
        guardian.prune(at: at(40))
        #expect(guardian.trackedSenders == 0)
    }

    @Test("a flood of one sender keeps at most `limit` timestamps and still mutes")
    func floodIsBounded() {
        var guardian = SpamGuard(limit: 5, window: 15)
        var verdicts: [SpamVerdict] = []
        for i in 0..<10_000 {
            verdicts.append(guardian.admit(sender: "flood", at: at(Double(i) * 0.001)))
        }
        #expect(verdicts.filter { $0 == .kicked }.count == 1)
        #expect(verdicts.filter { $0 == .allowed }.count == 5)
        #expect(verdicts.filter { $0 == .muted }.count == 9_994)
    }
}
