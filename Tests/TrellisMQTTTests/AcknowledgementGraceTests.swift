import Foundation
import Testing
import TrellisMQTT
import TrellisTestSupport

/// `Acknowledgement.acknowledged(outlastingCancellationBy:)`, the wait of a sender that must learn
/// whether the broker took a message on its way (a bridge's receiver at its stop), on a real
/// Mosquitto paused with SIGSTOP, so that no answer can come until the test lets it.
@Suite("A wait for an acknowledgement that outlasts its cancellation", .timeLimit(.minutes(1)))
struct AcknowledgementGraceTests {
    /// A QoS 1 message sent to a paused broker, with its acknowledgement to wait for; the broker runs
    /// again at the end.
    static func withUnanswered(
        _ body: (TestBroker, MQTTClient.Acknowledgement) async throws -> Void
    ) async throws {
        try await withTestBroker { broker in
            let client = try await TestClients.connect(to: broker)
            try await broker.pause()
            let sent = try client.publishForAcknowledgement(
                MQTTMessage(topic: "grace/answer", payload: Array("1".utf8), qos: .atLeastOnce))
            try await body(broker, sent)
            broker.resume()
            await client.shutdown()
        }
    }

    @Test("cancelled while the broker is paused, the wait still ends with the answer that comes within the grace")
    func answerWithinGrace() async throws {
        try await Self.withUnanswered { broker, sent in
            // A grace far longer than the test: the answer, not the grace, ends the wait.
            let wait = Task { try await sent.acknowledged(outlastingCancellationBy: .seconds(120)) }
            wait.cancel()
            broker.resume()
            let outcome = await wait.result
            #expect((try? outcome.get()) != nil, "\(outcome)")
        }
    }

    @Test("with no answer, the cancelled wait ends once the grace has passed, with CancellationError")
    func graceRunsOut() async throws {
        try await Self.withUnanswered { _, sent in
            let started = ContinuousClock.now
            let wait = Task { try await sent.acknowledged(outlastingCancellationBy: .milliseconds(300)) }
            wait.cancel()
            let outcome = await wait.result
            let waited = ContinuousClock.now - started
            #expect(throws: CancellationError.self) { try outcome.get() }
            // Not before the grace (the broker is still paused, so nothing else could end it).
            #expect(waited >= .milliseconds(300), "\(waited)")
        }
    }
}
