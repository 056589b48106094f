import Foundation
import Testing
import TrellisMQTT
import TrellisRelay
import TrellisTestSupport

@Suite("Plant tracker MQTT v5 request/response through a real broker", .serialized)
struct PlantCorrelationTests {
    static let correlation: [UInt8] = [0x00, 0xFF, 0x10, 0x42, 0x7F]

    /// Sends `message` from `phone` with ``correlation`` as its Correlation Data and `responseTopic`, when
    /// given, as its Response Topic.
    static func send(_ message: String, from phone: PlantClient, responseTopic: String? = nil) async throws {
        try await phone.send(
            message, properties: MQTTProperties(responseTopic: responseTopic, correlationData: correlation))
    }

    @Test(
        "a Response Topic gets the reply too, with the request's Correlation Data (a broker without accounts)",
        arguments: PlantTopics.allCases)
    func responseTopic(_ topics: PlantTopics) async throws {
        try await withRelay(settings: RelaySettings.losslessPlants.openResponseTopics) { relay in
            let phone = try await PlantClient.connect(relay, topics: topics, extraFilters: ["replies/#"])
            try await Self.send(
                phone.request("1", "REQ_addNewPlant", payload: "Fern,0x36"), from: phone, responseTopic: "replies/bob/1"
            )

            let expected = Wire.reply("1", to: phone.name, "RES_addNewPlant", payload: "Fern")
            let direct = try #require(try await phone.inbox.messages(on: "replies/bob/1").first)
            #expect(direct.text == expected)
            #expect(direct.properties.correlationData == Self.correlation)
            let shared = try #require(try await phone.inbox.messages(on: phone.replyTopic).first)
            #expect(shared.text == expected)
        }
    }

    @Test(
        "error answers also go to the Response Topic with the Correlation Data (a broker without accounts)",
        arguments: PlantTopics.allCases)
    func errorToResponseTopic(_ topics: PlantTopics) async throws {
        try await withRelay(settings: RelaySettings.losslessPlants.openResponseTopics) { relay in
            let phone = try await PlantClient.connect(relay, topics: topics, extraFilters: ["replies/#"])
            let message = phone.request("2", "REQ_fetchCoffee")
            try await Self.send(message, from: phone, responseTopic: "replies/bob/2")

            let direct = try #require(try await phone.inbox.messages(on: "replies/bob/2").first)
            #expect(direct.text == Wire.error("2", to: phone.name, "ERR_invalidOpTag", offending: message))
            #expect(direct.properties.correlationData == Self.correlation)
        }
    }

    @Test(
        "by default a Response Topic outside the requester's reply space gets nothing: the reply goes to the usual topic, the request to the dead letters",
        arguments: PlantTopics.allCases)
    func foreignResponseTopicRefused(_ topics: PlantTopics) async throws {
        try await withRelay(settings: .losslessPlants) { relay in
            let phone = try await PlantClient.connect(
                relay, topics: topics, extraFilters: ["p2o/clients/alice/#", "trellis/deadletter"])
            try await Self.send(
                phone.request("3", "REQ_addNewPlant", payload: "Fern,0x36"), from: phone,
                responseTopic: "p2o/clients/alice/button-press")

            let shared = try #require(try await phone.inbox.messages(on: phone.replyTopic).first)
            #expect(shared.text == Wire.reply("3", to: phone.name, "RES_addNewPlant", payload: "Fern"))
            let letter = try #require(try await phone.inbox.messages(on: "trellis/deadletter").first?.text)
            #expect(letter.contains(#""reason":"response_topic_refused""#))
            #expect(await phone.inbox.received(on: "p2o/clients/alice/button-press").isEmpty)
        }
    }

    @Test("by default a Response Topic below the requester's own reply topic is honoured")
    func ownResponseTopicHonoured() async throws {
        try await withRelay(settings: .losslessPlants) { relay in
            let phone = try await PlantClient.connect(relay, topics: .perClient, extraFilters: ["rpi/fromrpi/+/#"])
            let inbox = "\(phone.replyTopic)/rr"
            try await Self.send(phone.request("4", "REQ_numPlants"), from: phone, responseTopic: inbox)
            let direct = try #require(try await phone.inbox.messages(on: inbox).first)
            #expect(direct.properties.correlationData == Self.correlation)
        }
    }

    @Test(
        "a Response Topic equal to the reply topic gets one reply, carrying the Correlation Data",
        arguments: PlantTopics.allCases)
    func responseTopicIsReplyTopic(_ topics: PlantTopics) async throws {
        try await withRelay(settings: .losslessPlants) { relay in
            let phone = try await PlantClient.connect(relay, topics: topics)
            try await Self.send(phone.request("3", "REQ_numPlants"), from: phone, responseTopic: phone.replyTopic)
            let reply = try #require(try await phone.inbox.messages(on: phone.replyTopic).first)
            #expect(reply.text == Wire.reply("3", to: phone.name, "RES_numPlants", payload: "0"))
            #expect(reply.properties.correlationData == Self.correlation)

            try await phone.sendMarker()
            #expect(await phone.allReplies().count == 2)
        }
    }

    @Test("without a Response Topic the reply carries no Correlation Data", arguments: PlantTopics.allCases)
    func noResponseTopic(_ topics: PlantTopics) async throws {
        try await withRelay(settings: .losslessPlants) { relay in
            let phone = try await PlantClient.connect(relay, topics: topics, extraFilters: ["replies/#"])
            try await Self.send(phone.request("4", "REQ_numPlants"), from: phone)
            let reply = try #require(try await phone.inbox.messages(on: phone.replyTopic).first)
            #expect(reply.text == Wire.reply("4", to: phone.name, "RES_numPlants", payload: "0"))
            #expect(reply.properties.correlationData == nil)
            #expect(await phone.inbox.messages.filter { $0.topic.hasPrefix("replies/") }.isEmpty)
        }
    }
}
