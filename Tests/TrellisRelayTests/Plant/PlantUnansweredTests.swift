import Foundation
import Testing
import TrellisTestSupport

/// Messages Trellis must never answer, on the relay's engine over SQLite and PostgreSQL: everything
/// the engine publishes is seen, and a marker request sent last shows that the handling went on.
@Suite("Plant tracker messages that get no reply, on the engine, over every store")
struct PlantUnansweredTests {
    @Test(
        "a sender that is not the per-client topic's client is dead-lettered, not answered",
        arguments: [
            "ID:1;sender:Mallory;receiver:Host-RPI3B+;payload:;operation:REQ_numPlants",
            "ID:2;sender:Mallory;receiver:Host-RPI3B+;payload:Fern,0x36;operation:REQ_addNewPlant",
            "ID:3;sender:Mallory;payload:x",
            "ID:4;sender:alice;receiver:Host-RPI3B+;payload:;operation:REQ_numPlants"
        ], StoreKind.bothStores)
    func senderMismatch(_ message: String, _ kind: StoreKind) async throws {
        try await withPhone(kind, name: "Alice", topics: .perClient) { alice in
            let letters = try await alice.deadLetters(after: [message])

            #expect(alice.allReplies() == [Wire.reply("marker", to: "Alice", "RES_numPlants", payload: "0")])
            #expect(letters.count == 1)
            #expect(letters.first?.reason == "sender_mismatch")
            #expect(letters.first?.topic == "rpi/torpi/Alice")
            #expect(letters.first?.payload == message)
        }
    }

    @Test(
        "a message with no recoverable sender is dead-lettered with its reason, not answered",
        arguments: [
            ("", "ERR_hashLength"),
            ("hello", "ERR_missingVals"),
            ("ID:1;receiver:Host-RPI3B+;payload:;operation:REQ_numPlants", "ERR_hashLength"),
            ("ID:2;receiver:Host-RPI3B+;payload;operation:REQ_numPlants;sender:Bob's iPhone:x", "ERR_missingVals"),
            ("ID:3;sender:;receiver:Host-RPI3B+;payload:a:b;operation:REQ_numPlants", "ERR_missingKeys"),
            ("ID:4;Sender:Bob's iPhone;receiver:Host-RPI3B+;payload:;operation:REQ_numPlants", "ERR_missingKeys")
        ], PlantTopics.onEveryStore)
    func noSender(_ rejected: (message: String, reason: String), _ route: (PlantTopics, StoreKind)) async throws {
        let (message, reason) = rejected
        try await withPhone(route.1, topics: route.0) { phone in
            let letters = try await phone.deadLetters(after: [message])

            #expect(phone.allReplies().count == 1)
            #expect(letters.map(\.reason) == [reason])
            #expect(letters.first?.payload == message)
            #expect(letters.first?.topic == phone.requestTopic)
        }
    }

    @Test("invalid UTF-8 is dead-lettered as base64, not answered", arguments: PlantTopics.onEveryStore)
    func invalidUTF8(_ topics: PlantTopics, _ kind: StoreKind) async throws {
        try await withPhone(kind, topics: topics) { phone in
            let bytes =
                Array("ID:1;sender:Bob's iPhone;receiver:Host-RPI3B+;payload:".utf8) + [0xC3, 0x28, 0xFF]
                + Array(";operation:REQ_numPlants".utf8)
            try await phone.send(bytes)
            try await phone.sendMarker()

            #expect(phone.allReplies().count == 1)
            let letters = try phone.deadLetters()
            #expect(letters.count == 1)
            #expect(letters.first?.reason == "invalid_utf8")
            #expect(letters.first?.payload == nil)
            #expect(letters.first?.payloadBase64 == Data(bytes).base64EncodedString())
        }
    }

    @Test(
        "messages from the host itself are ignored: well-formed ones silently, malformed ones dead-lettered",
        arguments: PlantTopics.onEveryStore)
    func ownMessages(_ topics: PlantTopics, _ kind: StoreKind) async throws {
        try await withPhone(kind, topics: topics) { phone in
            let malformed = "ID:4;sender:Host-RPI3B+;receiver:Bob's iPhone;payload:x"
            let letters = try await phone.deadLetters(after: [
                Wire.request("1", from: plantHost, "REQ_numPlants"),
                Wire.reply("2", to: "Bob's iPhone", "RES_numPlants", payload: "0"),
                Wire.reply("3", to: "Bob's iPhone", "ERR_hashLength", payload: "x"),
                malformed
            ])

            #expect(phone.allReplies().count == 1)
            #expect(letters.map(\.reason) == ["ERR_hashLength"])
            #expect(letters.first?.payload == malformed)
        }
    }

    @Test("incoming ERR_ messages are never answered, well-formed or not", arguments: PlantTopics.onEveryStore)
    func incomingErrors(_ topics: PlantTopics, _ kind: StoreKind) async throws {
        try await withPhone(kind, topics: topics) { phone in
            // What a client might send back after receiving one of Trellis's errors.
            let bounced = phone.request(
                "7", "ERR_invalidOpTag", payload: Wire.escape(Wire.reply("7", to: "Bob's iPhone", "RES_x", payload: ""))
            )
            let malformed = "ID:9;sender:Bob's iPhone;payload:a;operation:ERR_hashLength"
            let letters = try await phone.deadLetters(after: [
                bounced, phone.request("8", "ERR_somethingNew", payload: "a%3Bb"), malformed
            ])

            #expect(phone.allReplies().count == 1)
            #expect(letters.map(\.reason) == ["ERR_hashLength"])
            #expect(letters.first?.payload == malformed)
        }
    }
}
