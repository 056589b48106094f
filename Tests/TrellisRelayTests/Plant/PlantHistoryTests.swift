import Foundation
import Testing
import TrellisCore
import TrellisMQTTTypes
import TrellisRelay
import TrellisStore
import TrellisTestSupport

/// `plants/history` on the relay's engine, on every store: readings sent as a sensor node sends
/// them come back as points, and hostile requests get a clear refusal, never a crash or a reply
/// on another client's topics.
@Suite("plants/history on the engine")
struct PlantHistoryTests {
    /// An engine with the plant Fern on 0x36 and thirty readings one a minute up to a minute ago.
    static func withReadings(_ kind: StoreKind, _ body: (EngineRecorder, Date) async throws -> Void) async throws {
        try await withRecorder(kind) { console in
            let now = Date()
            await console.addPlant("Fern", sensors: ["0x36"], as: "ann")
            for minute in 1...30 {
                let at = now.addingTimeInterval(-Double(31 - minute) * 60)
                await console.send(
                    #"{"moisture":\#(minute % 10 + 1),"temperature":\#(60 + minute),"at":"\#(ISO8601Time.format(at))"}"#,
                    on: "rpi/sensors/0x36", at: at)
            }
            try await body(console, now)
        }
    }

    static func object(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "\(text)")
    }

    @Test("a plant's and its sensor's readings come back raw, one point each", arguments: StoreKind.allCases)
    func readings(_ kind: StoreKind) async throws {
        try await Self.withReadings(kind) { console, now in
            let from = ISO8601Time.format(now.addingTimeInterval(-3600))
            let data = try Self.object(
                try await console.data("plants", "history", #"{"plant":"Fern","from":"\#(from)","transaction":7}"#))
            #expect(data["resolution"] as? String == "raw" && data["plant"] as? String == "Fern")
            let points = try #require(data["points"] as? [[String: Any]])
            #expect(points.count == 30)
            #expect(points.map { $0["moisture_min"] as? Int } == (1...30).map { $0 % 10 + 1 })
            #expect(points.map { $0["temperature_max"] as? Double } == (1...30).map { Double(60 + $0) })
            #expect(points.allSatisfy { $0["count"] as? Int == 1 })
            let bySensor = try Self.object(
                try await console.data("plants", "history", #"{"sensor":"0X36","from":"\#(from)"}"#))
            #expect((bySensor["points"] as? [[String: Any]])?.count == 30 && bySensor["sensor"] as? String == "0x36")
            // A step of an hour or more is answered from the hours; the raw readings not folded yet count.
            let hourly = try Self.object(
                try await console.data("plants", "history", #"{"plant":"Fern","from":"\#(from)","step":7200}"#))
            #expect(hourly["resolution"] as? String == "hourly" && hourly["step"] as? Int == 7200)
            let total = (hourly["points"] as? [[String: Any]])?.compactMap { $0["count"] as? Int }.reduce(0, +)
            #expect(total == 30)
        }
    }

    @Test(
        "hostile requests: refused clearly, or bounded; never on another client's topics", arguments: StoreKind.allCases
    )
    func hostile(_ kind: StoreKind) async throws {
        try await Self.withReadings(kind) { console, _ in
            let huge = try Self.object(
                try await console.data(
                    "plants", "history", #"{"plant":"Fern","from":"1970-01-01T00:00:00Z","to":"2099-12-31T23:59:59Z"}"#)
            )
            #expect(huge["resolution"] as? String == "hourly")
            #expect(((huge["step"] as? Int) ?? 0) % 3600 == 0 && ((huge["step"] as? Int) ?? 0) >= 4_102_444_800 / 1000)
            #expect((huge["points"] as? [[String: Any]])?.count == 1)
            for refused in [
                #"{"plant":"Fern","from":"9999-01-01T00:00:00Z"}"#,
                #"{"plant":"Fern","from":"2026-01-01T00:00:00Z","to":"9999-12-31T23:59:59Z"}"#,
                #"{"plant":"Fern","from":"1969-12-31T23:59:59Z"}"#,
                #"{"plant":"Fern","from":"yesterday"}"#,
                #"{"plant":"Fern","from":"2026-02-30T00:00:00Z"}"#,
                #"{"plant":"Fern","from":12}"#,
                #"{"plant":"Fern"}"#,
                #"{"plant":"Fern","from":"2026-05-02T00:00:00Z","to":"2026-05-01T00:00:00Z"}"#,
                #"{"plant":"Fern","from":"2099-01-01T00:00:00Z"}"#,
                #"{"plant":"Fern","from":"2026-05-01T00:00:00Z","step":0}"#,
                #"{"plant":"Fern","from":"2026-05-01T00:00:00Z","step":1e12}"#,
                #"{"plant":"Fern","sensor":"0x36","from":"2026-05-01T00:00:00Z"}"#,
                #"{"from":"2026-05-01T00:00:00Z"}"#,
                #"{"sensor":"0xZZ","from":"2026-05-01T00:00:00Z"}"#,
                #"{"plant":"","from":"2026-05-01T00:00:00Z"}"#,
                #"{"plant":"Fern","from":"2026-05-01T00:00:00Z","sql":"DROP TABLE reading_raw"}"#
            ] {
                #expect(try await console.errorCode("plants", "history", refused) == "invalid_request", "\(refused)")
            }
            #expect(
                try await console.errorCode("plants", "history", #"{"plant":"Nobody","from":"2026-05-01T00:00:00Z"}"#)
                    == "not_found")
            #expect(try await console.errorCode("plants", "historyx", "{}") == "unknown_action")

            // Bob asks on his own topics with Alice's reply topic as his Response Topic: the answer
            // goes to Bob's response topic only, and the attempt is dead-lettered.
            let topics = JSONTopics(prefix: "trellis")
            let alice = topics.response(service: "plants", action: "history", client: "alice")
            let published = await console.send(
                #"{"plant":"Fern","from":"2026-05-01T00:00:00Z"}"#,
                on: topics.request(service: "plants", action: "history", client: "bob"),
                properties: MQTTProperties(responseTopic: alice, correlationData: Array("c".utf8)))
            #expect(!published.contains { $0.topic == alice })
            #expect(
                published.contains { $0.topic == topics.response(service: "plants", action: "history", client: "bob") })
            #expect(published.contains { $0.topic == "trellis/deadletter" })
        }
    }
}
