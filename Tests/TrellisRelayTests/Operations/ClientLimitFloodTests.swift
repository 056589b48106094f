import Foundation
import Testing
import TrellisCore
import TrellisMQTT
import TrellisRelay
import TrellisTestSupport

/// One client flooding a real relay through a real broker: its registrations stop at the cap and
/// its dead letters at its quota, every refusal answered, while other clients and the operator
/// are served as before.
@Suite("Client limits: floods through the broker", .serialized)
struct ClientLimitFloodTests {
    @Test("100,000 registrations from one client: it keeps 256, every refusal is answered, others still register")
    func registrationFlood() async throws {
        try await withRelay { relay in
            let mallory = try await relay.connect(id: "mallory")
            let answers = try await MessageTally.counting(
                mallory, subscribedTo: ["p2o/clients/mallory/register-response"]
            ) { message in
                message.text?.contains(#""status":"success""#) == true ? "success" : "failed"
            }
            let total = 100_000, window = 400
            var sent = 0
            while sent < total {
                // At most `window` registrations unanswered: QoS 1, bounded in flight.
                try await answers.wait(for: sent - window / 2, of: ["success", "failed"])
                for index in sent..<min(total, sent + window / 2) {
                    try mallory.publish(
                        topic: "p2o/clients/mallory/register", payload: Array("b\(index)".utf8), qos: .atLeastOnce)
                }
                sent = min(total, sent + window / 2)
            }
            try await answers.wait(for: total, of: ["success", "failed"], timeout: .seconds(120))
            #expect(await answers.count(of: "success") == 256)
            #expect(await answers.count(of: "failed") == total - 256)
            let record = try await relay.store.client(id: "mallory")
            #expect(record?.registrations.count == 256)

            // Another client registers as ever, and mallory still renews one it holds.
            let alice = try await relay.connect(id: "alice")
            let inbox = try await MessageCollector.collecting(alice, subscribedTo: ["p2o/clients/+/register-response"])
            try await alice.publishAndWait(topic: "p2o/clients/alice/register", payload: Array("door".utf8))
            let reply = try await inbox.messages(on: "p2o/clients/alice/register-response", timeout: .seconds(20))
            #expect(reply.first?.text == #"{"status":"success"}"#)
            try await mallory.publishAndWait(topic: "p2o/clients/mallory/register", payload: Array("b0".utf8))
            try await answers.wait(for: 257, of: ["success"], timeout: .seconds(20))
        }
    }

    @Test(
        "10,000 dead letters of 64 KiB from one client: the operator's list answers within the packet limit, another client's letter stays"
    )
    func deadLetterFlood() async throws {
        try await withRelay { relay in
            let alice = try await relay.connect(id: "alice")
            let watcher = try await relay.connect(id: "watcher")
            let letters = try await MessageTally.counting(watcher, subscribedTo: ["trellis/deadletter"]) { _ in "letter"
            }
            try await alice.publishAndWait(topic: "p2o/clients/alice/status", payload: Array("maybe".utf8))
            try await letters.wait(for: 1, of: ["letter"])

            let mallory = try await relay.connect(id: "mallory")
            let payload = [UInt8](repeating: 0x78, count: DeadLetter.maximumPayloadSize)
            let total = 10_000, window = 40
            var sent = 0
            while sent < total {
                try await letters.wait(for: 1 + sent - window / 2, of: ["letter"], timeout: .seconds(120))
                for _ in sent..<min(total, sent + window / 2) {
                    try mallory.publish(topic: "p2o/clients/mallory/status", payload: payload, qos: .atLeastOnce)
                }
                sent = min(total, sent + window / 2)
            }
            try await letters.wait(for: 1 + total, of: ["letter"], timeout: .seconds(300))
            #expect(try await relay.store.counts().deadLetters == RelaySettings().deadLettersPerClient + 1)

            let (console, inbox) = try await relay.connectCollecting("trellis/response/deadletters/list")
            func list(_ request: String) async throws -> MQTTMessage {
                let before = await inbox.received(on: "trellis/response/deadletters/list").count
                try await console.publishAndWait(
                    topic: "trellis/request/deadletters/list", payload: Array(request.utf8))
                return try await inbox.messages(
                    on: "trellis/response/deadletters/list", count: before + 1, timeout: .seconds(30))[before]
            }
            let reply = try await list(#"{"limit":100}"#)
            // The broker's max_packet_size (broker.conf) is 4 MiB; the page stays within its own bound.
            #expect(reply.payload.count < RelaySettings().deadLetterPageBytes + 4_096, "\(reply.payload.count) bytes")
            let page = try Self.page(reply)
            #expect(
                page.truncated && page.letters.count >= 10 && page.letters.count < 100, "\(page.letters.count) letters")
            let cursor = try #require(page.next)
            let next = try Self.page(try await list(#"{"limit":100,"cursor":"\#(cursor)"}"#))
            #expect(next.letters.first?["id"] as? Int ?? .max < Int(cursor) ?? 0)

            let hers = try Self.page(try await list(#"{"topic_prefix":"p2o/clients/alice/"}"#))
            #expect(hers.letters.map { $0["payload"] as? String } == ["maybe"])
        }
    }

    static func page(_ reply: MQTTMessage) throws -> (letters: [[String: Any]], next: String?, truncated: Bool) {
        let object = try #require(try JSONSerialization.jsonObject(with: Data(reply.payload)) as? [String: Any])
        let data = try #require(object["data"] as? [String: Any], "\(object["status"] ?? "")")
        let letters = try #require(data["dead_letters"] as? [[String: Any]])
        return (letters, data["next_cursor"] as? String, data["truncated"] as? Bool ?? false)
    }
}
