import Foundation
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
import Testing
import TrellisBroker
import TrellisMQTT
import TrellisTestSupport

@Suite("Metrics, health and statistics")
struct MetricsTests {
    /// GET over HTTP with URLSession; returns status and body.
    static func get(_ url: String) async throws -> (Int, String) {
        let (data, response) = try await URLSession.shared.data(from: URL(string: url)!)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: data, as: UTF8.self))
    }

    /// Polls `url` until `condition` holds for its answer, or times out.
    static func waitFor(
        _ url: String, timeout: Duration = .seconds(30),
        _ condition: (Int, String) -> Bool
    ) async throws -> (Int, String) {
        let deadline = ContinuousClock.now + timeout
        var last: (Int, String) = (0, "")
        while ContinuousClock.now < deadline {
            if let answer = try? await get(url) {
                last = answer
                if condition(answer.0, answer.1) { return answer }
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw TimeoutError(message: "\(url) never satisfied the condition; last answer: \(last)")
    }

    @Test("/metrics shows the exact counts of known traffic; /health follows the broker; trellis/stats appears")
    func scrape() async throws {
        try await withTestBroker { broker in
            let directory = temporaryDirectory()
            let (trellis, ports) = try await TrellisBinary.startListening(
                { ports in
                    [
                        "run", "--broker", broker.address, "--state", directory, "--metrics", "127.0.0.1:\(ports[0])",
                        "--stats-interval", "0.2"
                    ]
                }, ready: { ports in ["Server started and listening on 127.0.0.1:\(ports[0])"] })
            let port = ports[0]
            let base = "http://127.0.0.1:\(port)"
            let (_, healthy) = try await Self.waitFor("\(base)/health") { status, _ in status == 200 }
            #expect(healthy.contains(#""store_failed_commits":0"#) && healthy.contains(#""store_writable":true"#))

            let (client, inbox) = try await TestClients.connectCollecting(
                to: broker, "rpi/fromrpi/metrics", "trellis/stats")
            for id in 0..<3 {
                let request = "ID:\(id);sender:metrics;receiver:Host-RPI3B+;payload:;operation:REQ_numPlants"
                try await client.publishAndWait(topic: "rpi/torpi/metrics", payload: Array(request.utf8))
            }
            try await client.publishAndWait(topic: "rpi/torpi/metrics", payload: Array("nonsense".utf8))
            try await inbox.messages(on: "rpi/fromrpi/metrics", count: 3)

            let (_, text) = try await Self.waitFor("\(base)/metrics") { _, body in
                // The handler's duration is recorded after its dead letter is counted: wait for both.
                body.contains(#"trellis_dead_letters_total{reason="ERR_missingVals"} 1"#)
                    && body.contains("trellis_handler_duration_seconds_count 4")
            }
            #expect(text.contains(#"trellis_messages_received_total{service="plant"} 4"#))
            #expect(text.contains(#"trellis_replies_total{operation="RES_numPlants"} 3"#))
            #expect(text.contains(#"trellis_messages_published_total{service="plant"} 3"#))
            #expect(text.contains("trellis_resident_memory_bytes"))
            #expect(text.contains("trellis_state_species 95"), "the starter catalog is imported at the first start")

            let stats = try await inbox.messages(on: "trellis/stats")
            #expect(stats[0].text?.contains("\"counters\"") == true)
            #expect(stats[0].text?.contains("\"resident_bytes\"") == true)
            #expect(
                stats[0].text?.contains(
                    #""store":{"failed_commits":0,"oldest_unwritten_change_s":0,"unwritten_changes":0,"writable":true}"#
                ) == true,
                "\(stats[0].text ?? "")")
            #expect(text.contains("trellis_store_writable 1"))
            #expect(text.contains("trellis_store_unwritten_changes 0"))

            broker.kill()
            let (down, body) = try await Self.waitFor("\(base)/health") { status, _ in status == 503 }
            #expect(down == 503)
            #expect(body.contains(#""broker_connected":false"#))
            try await broker.restart()
            _ = try await Self.waitFor("\(base)/health") { status, _ in status == 200 }

            #expect(try await trellis.terminate() == 0)
            await client.shutdown()
        }
    }
}
