import Foundation
import Testing
import TrellisCore
import TrellisMQTT
import TrellisRelay
import TrellisTestSupport

/// Presses and statuses that cannot be used, on the engine over SQLite and PostgreSQL: each leaves
/// one dead-letter record with its reason and changes nothing.
@Suite("Buttons: bad input")
struct ButtonBadInputTests {
    static let long = String(repeating: "b", count: 65)

    @Test(
        "bad presses are dead-lettered with their reason and not counted",
        arguments: [
            ("door", "soon", "invalid_press_time"),
            ("door", "1795344065", "invalid_press_time"),
            ("door", "2026-02-30T10:00:00Z", "invalid_press_time"),
            ("door", #"{"at":"2026-11-22T10:41:05Z"}"#, "invalid_press_time"),
            ("door", String(repeating: "x", count: 257), "too_large"),
            (long, "", "invalid_button_id"),
            (" door", "", "invalid_button_id")
        ].flatMap { press in StoreKind.bothStores.map { (press, $0) } })
    func badPress(press: (button: String, payload: String, reason: String), kind: StoreKind) async throws {
        try await withRecorder(kind) { relay async throws in
            await relay.send(press.payload, on: "p2o/buttons/\(press.button)/press")
            let letters = relay.messages(on: "trellis/deadletter")
            #expect(letters.count == 1)
            #expect(
                try Buttons.letter(try #require(letters.first)) == [
                    "payload": press.payload, "reason": press.reason, "topic": "p2o/buttons/\(press.button)/press"
                ])
            #expect(try await relay.store.button(id: press.button) == nil)
            // The next good press is the first one counted.
            await relay.press("door", at: 1)
            #expect(relay.texts(on: "p2o/buttons/door/state") == [Buttons.state("door", total: 1, history: [1])])
            #expect(relay.messages(on: "trellis/deadletter").count == 1)
        }
    }

    @Test("a press that is not UTF-8 is dead-lettered with its bytes in base64", arguments: StoreKind.bothStores)
    func pressNotUTF8(kind: StoreKind) async throws {
        try await withRecorder(kind) { relay async throws in
            await relay.send([0x32, 0x30, 0xff], on: "p2o/buttons/door/press")
            let letters = relay.messages(on: "trellis/deadletter")
            #expect(
                try Buttons.letter(try #require(letters.first))
                    == ["payload_base64": "MjD/", "reason": "invalid_utf8", "topic": "p2o/buttons/door/press"])
            #expect(try await relay.store.button(id: "door") == nil)
        }
    }

    @Test(
        "statuses other than online and offline, and invalid client ids, are dead-lettered",
        arguments: [
            ("x", "maybe", "invalid_status", false),
            ("x", "Online", "invalid_status", false),
            ("x", "", "invalid_status", false),
            (long, "offline", "invalid_client_id", false),
            (long, "online", "invalid_client_id", true)
        ].flatMap { status in StoreKind.bothStores.map { (status, $0) } })
    func badStatus(
        status: (client: String, payload: String, reason: String, answered: Bool), kind: StoreKind
    ) async throws {
        let (client, payload, reason, answered) = status
        try await withRecorder(kind) { relay async throws in
            await relay.send(client: client, "status", payload)
            let letters = relay.messages(on: "trellis/deadletter")
            #expect(letters.count == 1)
            #expect(
                try Buttons.letter(try #require(letters.first)) == [
                    "payload": payload, "reason": reason, "topic": "p2o/clients/\(client)/status"
                ])
            // A good status afterwards is answered, and is the only other answer.
            await relay.send(client: "good", "status", "online")
            #expect(relay.messages(on: "p2o/clients/good/connection-response").count == 1)
            let answers = relay.messages(on: "p2o/clients/\(client)/connection-response")
            #expect(
                answers.map(\.text)
                    == (answered
                        ? [#"{"error":"the client id has 65 characters; at most 64 are allowed","status":"failed"}"#]
                        : []))
            #expect(try await relay.store.client(id: client) == nil)
        }
    }
}
