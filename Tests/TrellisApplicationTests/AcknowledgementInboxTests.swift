import Synchronization
import Testing
import TrellisMQTT

@testable import TrellisApplication

/// The forwarder's inbox of the upstream broker's answers: it gathers them from the network thread
/// and wakes the forwarder once, when as many have come as the window awaits.
@Suite("Bridge: the inbox of acknowledgements")
struct AcknowledgementInboxTests {
    /// How often an inbox woke its forwarder.
    final class Wakes: Sendable {
        private let count = Atomic(0)
        func wake() { count.add(1, ordering: .relaxed) }
        var value: Int { count.load(ordering: .relaxed) }
    }

    /// An inbox and the count of its wakes.
    static func inbox() -> (AcknowledgementInbox, Wakes) {
        let wakes = Wakes()
        return (AcknowledgementInbox { wakes.wake() }, wakes)
    }

    @Test("one wake once the awaited count has gathered, none for the answers after it until they are taken")
    func wakesOnceAtTheCount() {
        let (inbox, wakes) = Self.inbox()
        inbox.await(3)
        inbox.add(.acknowledged(1))
        inbox.add(.acknowledged(2))
        #expect(wakes.value == 0, "two of three: the forwarder sleeps on")
        inbox.add(.acknowledged(3))
        inbox.add(.acknowledged(4))
        #expect(wakes.value == 1)
        #expect(inbox.take() == [.acknowledged(1), .acknowledged(2), .acknowledged(3), .acknowledged(4)])
        #expect(inbox.take().isEmpty)
    }

    @Test("a count set lower than what gathered wakes at once; taking gathered answers lets the next wake come")
    func awaitingFewerWakesNow() {
        let (inbox, wakes) = Self.inbox()
        inbox.await(32)
        for id in Int64(1)...5 { inbox.add(.acknowledged(id)) }
        #expect(wakes.value == 0)
        // Messages now wait for room in the window: every answer counts.
        inbox.await(1)
        #expect(wakes.value == 1)
        inbox.await(1)
        #expect(wakes.value == 1, "woken and not yet taken: no second wake")
        #expect(inbox.take().count == 5)
        inbox.add(.refused(6, MQTTError(kind: .invalidArgument, message: "too large")))
        #expect(wakes.value == 2)
        #expect(inbox.take() == [.refused(6, MQTTError(kind: .invalidArgument, message: "too large"))])
    }

    @Test("answers from many threads at once: each taken once, none lost, the forwarder woken")
    func concurrentAnswers() async {
        let (inbox, wakes) = Self.inbox()
        inbox.await(1)
        await withTaskGroup(of: Void.self) { group in
            for thread in Int64(0)..<8 {
                group.addTask {
                    for id in 0..<1_000 { inbox.add(.acknowledged(thread * 1_000 + Int64(id))) }
                }
            }
            var taken: [AcknowledgementInbox.Answer] = []
            // Taken while the answers come, as the forwarder does.
            for _ in 0..<10_000 {
                taken += inbox.take()
                if taken.count == 8_000 { break }
                await Task.yield()
            }
            await group.waitForAll()
            taken += inbox.take()
            #expect(Set(taken).count == 8_000 && taken.count == 8_000)
        }
        #expect(wakes.value >= 1)
    }
}
