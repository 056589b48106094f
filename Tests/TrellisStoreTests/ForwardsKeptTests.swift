import Testing
import TrellisCore
import TrellisStore

/// ``ForwardsKept``: which committed batches tell a bridge's forwarder, and how its wait ends.
@Suite("Forwards kept: the forwarder told of each commit")
struct ForwardsKeptTests {
    static let mark = DeliveryMark(packetID: 7, fingerprint: 9)

    static func forward(_ bridge: String) -> BufferedWrite {
        .forward(bridge: bridge, rule: "s/#", topic: "s/1", payload: [1], qos: 1, retain: false, at: 1)
    }

    @Test("a batch counts once for each bridge it kept messages for, a delivery's mark around them or not")
    func counts() {
        let kept = ForwardsKept()
        kept.committed([.reading(sensor: "s", moisture: 1, temperature: 2, at: 3), .probe(at: 4)])
        #expect(kept.count(bridge: "cloud") == 0)
        // The relay's path: the message kept in the batch that marks its delivery handled.
        kept.committed([.marked(Self.forward("cloud"), Self.mark), Self.forward("cloud"), Self.forward("other")])
        #expect(kept.count(bridge: "cloud") == 1 && kept.count(bridge: "other") == 1)
        kept.committed([.marked(Self.forward("other"), Self.mark)])
        #expect(kept.count(bridge: "cloud") == 1 && kept.count(bridge: "other") == 2)
    }

    @Test("a wait ends at once when the count is past, at the commit when it moves, else at its limit")
    func waits() async {
        let kept = ForwardsKept()
        kept.committed([Self.forward("cloud")])
        let started = ContinuousClock.now
        await kept.wait(bridge: "cloud", past: 0, limit: .seconds(60))
        #expect(ContinuousClock.now - started < .seconds(30), "past already, yet it waited")
        await kept.wait(bridge: "cloud", past: 1, limit: .milliseconds(20))
        // A wait of a minute ends by this bridge's commit (whether it began before the commits, or after
        // them and so past already); that another bridge's does not count is checked in `counts`.
        async let waited: Void = kept.wait(bridge: "cloud", past: 1, limit: .seconds(60))
        kept.committed([.marked(Self.forward("other"), Self.mark)])
        kept.committed([.marked(Self.forward("cloud"), Self.mark)])
        await waited
        #expect(ContinuousClock.now - started < .seconds(30), "the wait ran to its limit")
        #expect(kept.count(bridge: "cloud") == 2)
    }
}
