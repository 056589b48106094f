import Foundation
import Testing
import TrellisCore
import TrellisMQTT
import TrellisRelay
import TrellisTestSupport

/// Presses and statuses that cannot be used: each leaves one dead-letter record with its reason
/// and changes nothing.
@Suite("Buttons: bad input", .serialized)
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
        ])
    func badPress(button: String, payload: String, reason: String) async throws {
        try await withRelay { relay in
            let (app, inbox) = try await relay.connectCollecting("trellis/deadletter", "p2o/buttons/+/state")
            try await app.publishAndWait(topic: "p2o/buttons/\(button)/press", payload: Array(payload.utf8))
            let letters = try await inbox.messages(on: "trellis/deadletter")
            #expect(
                try Buttons.letter(letters[0]) == [
                    "payload": payload, "reason": reason, "topic": "p2o/buttons/\(button)/press"
                ])
            #expect(try await relay.store.button(id: button) == nil)
            // The next good press is the first one counted.
            try await Buttons.press(app, "door", at: 1)
            let state = try await inbox.messages(on: "p2o/buttons/door/state")
            #expect(state[0].text == Buttons.state("door", total: 1, history: [1]))
            #expect(await inbox.received(on: "trellis/deadletter").count == 1)
        }
    }

    @Test("a press that is not UTF-8 is dead-lettered with its bytes in base64")
    func pressNotUTF8() async throws {
        try await withRelay { relay in
            let (app, inbox) = try await relay.connectCollecting("trellis/deadletter")
            try await app.publishAndWait(topic: "p2o/buttons/door/press", payload: [0x32, 0x30, 0xff])
            let letters = try await inbox.messages(on: "trellis/deadletter")
            #expect(
                try Buttons.letter(letters[0])
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
        ])
    func badStatus(client: String, payload: String, reason: String, answered: Bool) async throws {
        try await withRelay { relay in
            let (app, inbox) = try await relay.connectCollecting(
                "trellis/deadletter", "p2o/clients/+/connection-response")
            try await Buttons.send(app, client, "status", payload)
            let letters = try await inbox.messages(on: "trellis/deadletter")
            #expect(
                try Buttons.letter(letters[0]) == [
                    "payload": payload, "reason": reason, "topic": "p2o/clients/\(client)/status"
                ])
            // A good status afterwards is answered, and is the only other answer.
            try await Buttons.send(app, "good", "status", "online")
            try await inbox.messages(on: "p2o/clients/good/connection-response")
            let answers = await inbox.received(on: "p2o/clients/\(client)/connection-response")
            #expect(
                answers.map(\.text)
                    == (answered
                        ? [#"{"error":"the client id has 65 characters; at most 64 are allowed","status":"failed"}"#]
                        : []))
            #expect(try await relay.store.client(id: client) == nil)
        }
    }
}
