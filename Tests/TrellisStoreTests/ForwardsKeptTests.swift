import Synchronization
import Testing
import TrellisCore
import TrellisStore

/// ``ForwardsKept``: which committed batches tell a bridge's forwarder, and until when.
@Suite("Forwards kept: the forwarder told of each commit")
struct ForwardsKeptTests {
    static let mark = DeliveryMark(packetID: 7, fingerprint: 9)

    static func forward(_ bridge: String) -> BufferedWrite {
        .forward(bridge: bridge, rule: "s/#", topic: "s/1", payload: [1], qos: 1, retain: false, at: 1)
    }

    /// How often an observer was told.
    final class Told: Sendable {
        private let count = Atomic(0)
        func tell() { count.add(1, ordering: .relaxed) }
        var value: Int { count.load(ordering: .relaxed) }
    }

    @Test(
        "an observer is told once for each batch that kept messages for its bridge, a delivery's mark around them or not"
    )
    func toldPerBatch() {
        let kept = ForwardsKept()
        let (cloud, other) = (Told(), Told())
        let observations = [
            kept.observe(bridge: "cloud") { cloud.tell() }, kept.observe(bridge: "other") { other.tell() }
        ]
        kept.committed([.reading(sensor: "s", moisture: 1, temperature: 2, at: 3), .probe(at: 4)])
        #expect(cloud.value == 0 && other.value == 0)
        // The relay's path: the message kept in the batch that marks its delivery handled.
        kept.committed([.marked(Self.forward("cloud"), Self.mark), Self.forward("cloud"), Self.forward("other")])
        #expect(cloud.value == 1 && other.value == 1)
        kept.committed([.marked(Self.forward("other"), Self.mark)])
        #expect(cloud.value == 1 && other.value == 2)
        withExtendedLifetime(observations) {}
    }

    @Test("an observation ended, or released, is told nothing more")
    func ends() {
        let kept = ForwardsKept()
        let (ended, released) = (Told(), Told())
        let observation = kept.observe(bridge: "cloud") { ended.tell() }
        do {
            let dropped = kept.observe(bridge: "cloud") { released.tell() }
            kept.committed([Self.forward("cloud")])
            withExtendedLifetime(dropped) {}
        }
        #expect(ended.value == 1 && released.value == 1)
        observation.end()
        observation.end()
        kept.committed([Self.forward("cloud")])
        #expect(ended.value == 1 && released.value == 1)
    }
}
