import Foundation
import Testing
import TrellisCore
import TrellisMQTT
import TrellisRelay
import TrellisTestSupport

/// One client flooding the relay, on the engine: its registrations stop at the cap and its dead
/// letters at its quota (the operator's list of them still fits the broker's packet limit), every
/// refusal answered, while other clients and the operator are served as before.
@Suite("Client limits: floods", .serialized)
struct ClientLimitFloodTests {
    @Test(
        "5,000 registrations from one client: it keeps 256, every refusal is answered, others still register",
        .timeLimit(.minutes(5)))
    func registrationFlood() async throws {
        // On the engine over SQLite: the cap is the store's (one statement, tested on both stores in
        // the store tests); this is the relay's answer to each of a flood's messages, without a broker's
        // pace between them.
        try await withEngine(.inMemory) { relay async throws in
            var answers: [String: Int] = [:]
            func register(_ client: String, _ button: String) async -> [String] {
                await relay.send(button, on: "p2o/clients/\(client)/register").filter {
                    $0.topic == "p2o/clients/\(client)/register-response"
                }.map { $0.text?.contains(#""status":"success""#) == true ? "success" : "failed" }
            }
            let total = 5_000
            for index in 0..<total {
                for answer in await register("mallory", "b\(index)") { answers[answer, default: 0] += 1 }
            }
            #expect(answers["success"] == 256)
            #expect(answers["failed"] == total - 256)
            #expect(try await relay.store.client(id: "mallory")?.registrations.count == 256)

            // Another client registers as ever, and mallory still renews one it holds.
            #expect(await register("alice", "door") == ["success"])
            #expect(await register("mallory", "b0") == ["success"])
        }
    }

    @Test(
        "3,000 dead letters of 64 KiB from one client (3 times its quota): the operator's list answers within the packet limit, another client's letter stays",
        .timeLimit(.minutes(5)), arguments: StoreKind.bothStores)
    func deadLetterFlood(_ kind: StoreKind) async throws {
        // The engine's harness, not a recorder: what it publishes is counted, not kept (192 MB).
        try await withEngine(kind) { relay async throws in
            func letters(_ out: [MQTTMessage]) -> Int { out.filter { $0.topic == "trellis/deadletter" }.count }
            var published = letters(await relay.send("maybe", on: "p2o/clients/alice/status"))
            let payload = [UInt8](repeating: 0x78, count: DeadLetter.maximumPayloadSize)
            let total = 3_000
            for _ in 0..<total { published += letters(await relay.send(payload, on: "p2o/clients/mallory/status")) }
            #expect(published == 1 + total)
            try await relay.store.flush()
            #expect(try await relay.store.counts().deadLetters == RelaySettings().deadLettersPerClient + 1)

            func list(_ request: String) async throws -> MQTTMessage {
                let out = await relay.send(request, on: "trellis/request/deadletters/list")
                return try #require(out.last { $0.topic == "trellis/response/deadletters/list" }, "\(out)")
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
