import Foundation
import Testing
import TrellisMQTTTypes
import TrellisRelay
import TrellisTestSupport

/// The plant tracker's MQTT v5 request/response on the engine over SQLite and PostgreSQL: where a
/// reply goes and what Correlation Data it carries is what the engine returns for the request.
@Suite("Plant tracker MQTT v5 request/response")
struct PlantCorrelationTests {
    static let correlation: [UInt8] = [0x00, 0xFF, 0x10, 0x42, 0x7F]

    /// Sends `message` from `phone` with ``correlation`` as its Correlation Data and `responseTopic`, when
    /// given, as its Response Topic; what the engine published.
    static func send(_ message: String, from phone: EnginePhone, responseTopic: String? = nil) async throws
        -> [MQTTMessage]
    {
        try await phone.send(
            message, properties: MQTTProperties(responseTopic: responseTopic, correlationData: correlation))
    }

    @Test(
        "a Response Topic gets the reply too, with the request's Correlation Data (a broker without accounts)",
        arguments: PlantTopics.onEveryStore)
    func responseTopic(_ topics: PlantTopics, _ kind: StoreKind) async throws {
        try await withPhone(kind, settings: RelaySettings.losslessPlants.openResponseTopics, topics: topics) { phone in
            let out = try await Self.send(
                phone.request("1", "REQ_addNewPlant", payload: "Fern,0x36"), from: phone, responseTopic: "replies/bob/1"
            )
            let expected = Wire.reply("1", to: phone.name, "RES_addNewPlant", payload: "Fern")
            let direct = try #require(out.first { $0.topic == "replies/bob/1" })
            #expect(direct.text == expected)
            #expect(direct.properties.correlationData == Self.correlation)
            #expect(out.filter { $0.topic == phone.replyTopic }.map(\.text) == [expected])
        }
    }

    @Test(
        "error answers also go to the Response Topic with the Correlation Data (a broker without accounts)",
        arguments: PlantTopics.onEveryStore)
    func errorToResponseTopic(_ topics: PlantTopics, _ kind: StoreKind) async throws {
        try await withPhone(kind, settings: RelaySettings.losslessPlants.openResponseTopics, topics: topics) { phone in
            let message = phone.request("2", "REQ_fetchCoffee")
            let out = try await Self.send(message, from: phone, responseTopic: "replies/bob/2")
            let direct = try #require(out.first { $0.topic == "replies/bob/2" })
            #expect(direct.text == Wire.error("2", to: phone.name, "ERR_invalidOpTag", offending: message))
            #expect(direct.properties.correlationData == Self.correlation)
        }
    }

    @Test(
        "by default a Response Topic outside the requester's reply space gets nothing: the reply goes to the usual topic, the request to the dead letters",
        arguments: PlantTopics.onEveryStore)
    func foreignResponseTopicRefused(_ topics: PlantTopics, _ kind: StoreKind) async throws {
        try await withPhone(kind, topics: topics) { phone in
            let out = try await Self.send(
                phone.request("3", "REQ_addNewPlant", payload: "Fern,0x36"), from: phone,
                responseTopic: "p2o/clients/alice/button-press")
            #expect(
                out.filter { $0.topic == phone.replyTopic }.map(\.text)
                    == [Wire.reply("3", to: phone.name, "RES_addNewPlant", payload: "Fern")])
            #expect(try phone.deadLetters().map(\.reason) == ["response_topic_refused"])
            #expect(!out.contains { $0.topic == "p2o/clients/alice/button-press" })
        }
    }

    @Test(
        "by default a Response Topic below the requester's own reply topic is honoured", arguments: StoreKind.bothStores
    )
    func ownResponseTopicHonoured(_ kind: StoreKind) async throws {
        try await withPhone(kind, topics: .perClient) { phone in
            let inbox = "\(phone.replyTopic)/rr"
            let out = try await Self.send(phone.request("4", "REQ_numPlants"), from: phone, responseTopic: inbox)
            let direct = try #require(out.first { $0.topic == inbox })
            #expect(direct.properties.correlationData == Self.correlation)
        }
    }

    @Test(
        "a Response Topic equal to the reply topic gets one reply, carrying the Correlation Data",
        arguments: PlantTopics.onEveryStore)
    func responseTopicIsReplyTopic(_ topics: PlantTopics, _ kind: StoreKind) async throws {
        try await withPhone(kind, topics: topics) { phone in
            let out = try await Self.send(
                phone.request("3", "REQ_numPlants"), from: phone, responseTopic: phone.replyTopic)
            let replies = out.filter { $0.topic == phone.replyTopic }
            #expect(replies.map(\.text) == [Wire.reply("3", to: phone.name, "RES_numPlants", payload: "0")])
            #expect(replies.first?.properties.correlationData == Self.correlation)
            #expect(out.count == 1)
        }
    }

    @Test("without a Response Topic the reply carries no Correlation Data", arguments: PlantTopics.onEveryStore)
    func noResponseTopic(_ topics: PlantTopics, _ kind: StoreKind) async throws {
        try await withPhone(kind, topics: topics) { phone in
            let out = try await Self.send(phone.request("4", "REQ_numPlants"), from: phone)
            #expect(out.map(\.topic) == [phone.replyTopic])
            #expect(out.first?.text == Wire.reply("4", to: phone.name, "RES_numPlants", payload: "0"))
            #expect(out.first?.properties.correlationData == nil)
        }
    }
}
