import Foundation
import Testing
import TrellisBroker
import TrellisMQTT
import TrellisStore
import TrellisStoreSQLite
import TrellisTestSupport

/// Trellis killed with SIGKILL in the middle of a burst of QoS 1 presses, then started again.
///
/// The broker resends every press whose acknowledgement it did not get; Trellis commits each
/// press with the mark of its delivery and drops the redeliveries it already handled, so no press
/// is ever counted twice. libmosquitto queues a QoS 1 acknowledgement as it reads the message, but
/// Trellis writes nothing while it holds an unhandled message, so no acknowledgement leaves before
/// its press is committed: no kill loses a press. Trellis says it is connected only once the broker
/// acknowledged its subscriptions, so the first presses of a fresh session reach it too.
///
/// `make test` runs a short form; `TRELLIS_SOAK=1` (`make soak`) runs 20 kills of 10,000 presses.
@Suite("Kill and restart during a burst")
struct KillRecoveryTests {
    static var soak: Bool { ProcessInfo.processInfo.environment["TRELLIS_SOAK"] == "1" }

    @Test("totals survive SIGKILL during bursts of QoS 1 presses")
    func killDuringBurst() async throws {
        let rounds = Self.soak ? 20 : 3
        let burst = Self.soak ? 10_000 : 1_500
        try await withTestBroker { broker in
            let state = temporaryDirectory()
            let presser = try await TestClients.connect(to: broker, id: "presser")
            let (asker, answers) = try await TestClients.connectCollecting(to: broker, id: "asker", "rpi/fromrpi/asker")
            var sent = 0
            var report: [String] = []
            for round in 0..<rounds {
                let trellis = try TrellisBinary.start(["run", "--broker", broker.address, "--state", state])
                try await trellis.waitForOutput("connected to the broker")
                let killAfter = Int.random(in: burst / 10...burst * 9 / 10)
                for index in 0..<burst {
                    try presser.publish(topic: "p2o/buttons/burst/press", payload: [], qos: .atLeastOnce)
                    sent += 1
                    if index == killAfter {
                        trellis.process.signal(SIGKILL)
                        _ = try await trellis.waitForExit()
                    }
                }
                try await presser.publishAndWait(topic: "p2o/buttons/burst/press", payload: [], qos: .atLeastOnce)
                sent += 1

                let restarted = try TrellisBinary.start(["run", "--broker", broker.address, "--state", state])
                // Requests are handled in order, so this answer means every queued press was handled.
                let marker = "ID:\(round);sender:asker;receiver:Host-RPI3B+;payload:;operation:REQ_numPlants"
                try await asker.publishAndWait(topic: "rpi/torpi/asker", payload: Array(marker.utf8), qos: .atLeastOnce)
                do {
                    try await answers.messages(on: "rpi/fromrpi/asker", count: round + 1, timeout: .seconds(120))
                } catch {
                    Issue.record(
                        "no answer after restart \(round + 1); trellis said: \(restarted.output.suffix(2000)); killed one said: \(trellis.output.suffix(1000))"
                    )
                    throw error
                }
                #expect(try await restarted.terminate() == 0)

                let store = try SQLiteStore(directory: state)
                let total = try await store.button(id: "burst")?.total ?? 0
                try await store.close()
                report.append("round \(round + 1): sent \(sent), counted \(total), lost \(sent - total)")
                #expect(total == sent, "presses lost or counted twice: \(report.joined(separator: "; "))")
            }
            print("kill recovery: " + report.joined(separator: "; "))
            await presser.shutdown()
            await asker.shutdown()
        }
    }
}
