import Foundation
import Testing
import TrellisCore
import TrellisMQTT
import TrellisRelay
import TrellisTestSupport

/// `trellis/request/deadletters/list` on the engine over SQLite and PostgreSQL: what was rejected comes
/// back from the store, filtered, paged and newest first, to operators only.
@Suite("Dead letters: listed for operators")
struct DeadLetterListTests {
    /// Three rejected messages, oldest first: (topic, payload, reason).
    static let rejected = [
        ("devices/node7/status", "maybe", "invalid_status"),
        ("devices/bad id/status", "online", "invalid_device_id"),
        ("devices/node7/telemetry", "{not json", "invalid_json")
    ]

    @Test(
        "filters by reason, topic prefix and since; pages with next_cursor; newest first",
        arguments: StoreKind.bothStores)
    func list(kind: StoreKind) async throws {
        try await withRecorder(kind, settings: .operators(["ops"])) { console async throws in
            for (index, (topic, payload, _)) in Self.rejected.enumerated() {
                await console.send(payload, on: topic, at: Date().addingTimeInterval(Double(index) - 10))
                #expect(console.messages(on: "trellis/deadletter").count == index + 1)
            }

            let all = try await letters(console, "{}")
            #expect(all.map { $0["reason"] as? String } == Self.rejected.reversed().map(\.2))
            #expect(all.map { $0["topic"] as? String } == Self.rejected.reversed().map(\.0))
            #expect(all.map { $0["payload"] as? String } == Self.rejected.reversed().map(\.1))
            #expect(all.allSatisfy { ($0["received_at"] as? String).flatMap(ISO8601Time.parse) != nil })

            #expect(
                try await letters(console, #"{"reason":"invalid_status"}"#).map { $0["topic"] as? String } == [
                    "devices/node7/status"
                ])
            #expect(try await letters(console, #"{"topic_prefix":"devices/node7/"}"#).count == 2)
            #expect(try await letters(console, #"{"since":"1h"}"#).count == 3)
            #expect(try await letters(console, #"{"since":"2999-01-01T00:00:00Z"}"#).isEmpty)

            // Pages of two: the second starts after the first's last letter.
            let first = try await page(console, #"{"limit":2}"#)
            #expect(first.letters.map { $0["reason"] as? String } == ["invalid_json", "invalid_device_id"])
            let cursor = try #require(first.next)
            let second = try await page(console, #"{"limit":2,"cursor":"\#(cursor)"}"#)
            #expect(second.letters.map { $0["reason"] as? String } == ["invalid_status"])
            #expect(second.next == nil)

            #expect(try await console.errorCode("deadletters", "list", #"{"limit":0}"#) == "invalid_request")
            #expect(try await console.errorCode("deadletters", "list", #"{"since":"yesterday"}"#) == "invalid_request")
            #expect(try await console.errorCode("deadletters", "list", #"{"colour":"red"}"#) == "invalid_request")
            #expect(try await console.errorCode("deadletters", "list", "{}", client: "alice") == "forbidden")
            let asOperator = try await console.request("deadletters", "list", #"{"limit":1}"#, client: "ops")
            #expect(asOperator.contains(#""status":"ok""#) && asOperator.contains("invalid_json"), "\(asOperator)")
        }
    }

    /// The letters of one reply's `data`.
    func letters(_ console: some JSONConsole, _ request: String) async throws -> [[String: Any]] {
        try await page(console, request).letters
    }

    func page(_ console: some JSONConsole, _ request: String) async throws -> (letters: [[String: Any]], next: String?)
    {
        let data = try await console.data("deadletters", "list", request)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(data.utf8)) as? [String: Any], "\(data)")
        let letters = try #require(object["dead_letters"] as? [[String: Any]], "\(data)")
        return (letters, object["next_cursor"] as? String)
    }
}
