import Synchronization
import Testing
import TrellisMQTT

@testable import TrellisApplication

/// The forwarder's inbox: it gathers the upstream broker's answers, the commits that kept messages
/// and the look falling due from other threads, and wakes the forwarder once for all of it, when
/// something asks for it.
@Suite("Bridge: the forwarder's inbox")
struct ForwarderInboxTests {
    /// How often an inbox woke its forwarder.
    final class Wakes: Sendable {
        private let count = Atomic(0)
        func wake() { count.add(1, ordering: .relaxed) }
        var value: Int { count.load(ordering: .relaxed) }
    }

    /// An inbox and the count of its wakes.
    static func inbox() -> (ForwarderInbox, Wakes) {
        let wakes = Wakes()
        return (ForwarderInbox { wakes.wake() }, wakes)
    }

    @Test("one wake once the awaited count of answers has gathered, none for the answers after it until taken")
    func wakesOnceAtTheCount() {
        let (inbox, wakes) = Self.inbox()
        inbox.await(3)
        inbox.add(.acknowledged(1))
        inbox.add(.acknowledged(2))
        #expect(wakes.value == 0, "two of three: the forwarder sleeps on")
        inbox.add(.acknowledged(3))
        inbox.add(.acknowledged(4))
        #expect(wakes.value == 1)
        #expect(inbox.take().answers == [.acknowledged(1), .acknowledged(2), .acknowledged(3), .acknowledged(4)])
        #expect(inbox.take() == ForwarderInbox.Taken())
    }

    @Test("a count set lower than what gathered wakes now; taking what gathered lets the next wake come")
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
        #expect(inbox.take().answers.count == 5)
        let refusal = MQTTError(kind: .invalidArgument, message: "too large")
        inbox.add(.refused(6, refusal))
        #expect(wakes.value == 2)
        #expect(inbox.take().answers == [.refused(6, refusal)])
    }

    @Test(
        "a commit and the look falling due each wake the forwarder at once; what gathers while it is busy is one wake")
    func keptAndLookDue() {
        let (inbox, wakes) = Self.inbox()
        inbox.await(32)
        inbox.add(.acknowledged(1))
        inbox.kept()
        #expect(wakes.value == 1, "a commit does not wait for answers")
        // Busy meanwhile: more commits, the look due, answers: no further wake.
        inbox.kept()
        inbox.lookDue()
        inbox.add(.acknowledged(2))
        #expect(wakes.value == 1)
        #expect(
            inbox.take()
                == ForwarderInbox.Taken(answers: [.acknowledged(1), .acknowledged(2)], kept: true, lookDue: true))
        inbox.lookDue()
        #expect(wakes.value == 2)
        #expect(inbox.take() == ForwarderInbox.Taken(answers: [], kept: false, lookDue: true))
    }

    @Test("answers from many threads at once: each taken once, none lost")
    func concurrentAnswers() async {
        let (inbox, wakes) = Self.inbox()
        inbox.await(1)
        await withTaskGroup(of: Void.self) { group in
            for thread in Int64(0)..<8 {
                group.addTask {
                    for id in 0..<1_000 { inbox.add(.acknowledged(thread * 1_000 + Int64(id))) }
                }
            }
            var taken: [ForwarderInbox.Answer] = []
            // Taken while the answers come, as the forwarder does.
            for _ in 0..<10_000 {
                taken += inbox.take().answers
                if taken.count == 8_000 { break }
                await Task.yield()
            }
            await group.waitForAll()
            taken += inbox.take().answers
            #expect(Set(taken).count == 8_000 && taken.count == 8_000)
        }
        #expect(wakes.value >= 1)
    }
}
