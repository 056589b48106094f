import Foundation
import Testing
import TrellisCore
import TrellisMQTT
import TrellisRelay
import TrellisTestSupport

/// A press dated far ahead of the clock, on the engine over SQLite and PostgreSQL: refused, so it
/// cannot stay the newest press for ever, and the real presses after it are counted and shown.
@Suite("Buttons: presses dated in the future")
struct ButtonFutureTimeTests {
    @Test(
        "a press dated 9999 is dead-lettered as future_time; a real press afterwards is counted and in the history",
        arguments: StoreKind.bothStores)
    func year9999(kind: StoreKind) async throws {
        try await withRecorder(kind) { relay async throws in
            let future = "9999-01-01T00:00:00Z"
            await relay.send(future, on: "p2o/buttons/door/press")
            let letters = relay.messages(on: "trellis/deadletter")
            #expect(
                try Buttons.letter(try #require(letters.first)) == [
                    "payload": future, "reason": "future_time", "topic": "p2o/buttons/door/press"
                ])
            #expect(try await relay.store.button(id: "door") == nil, "nothing counted or stored")

            // Real presses afterwards, one stating its time, one pressed now: both counted, the
            // later one the newest of the history.
            let stated = ISO8601Time.format(Date().addingTimeInterval(-60))
            await relay.send(stated, on: "p2o/buttons/door/press")
            await relay.send("", on: "p2o/buttons/door/press")
            let states = relay.messages(on: "p2o/buttons/door/state")
            try #require(states.count == 2)
            let object = try #require(try JSONSerialization.jsonObject(with: Data(states[1].payload)) as? [String: Any])
            let history = try #require(object["history"] as? [String])
            #expect(object["total"] as? Int == 2)
            #expect(history.count == 2 && history[0] == stated, "\(history)")
            let pressedNow = try #require(ISO8601Time.parse(history[1]))
            #expect(abs(pressedNow.timeIntervalSinceNow) < 60)

            await relay.send(client: "reader", "register", "door")
            #expect(
                relay.latest(on: "p2o/clients/reader/register-response")
                    == #"{"button":{"count":0,"history":["\#(history[0])","\#(history[1])"],"id":"door"},"status":"success"}"#
            )
            #expect(relay.messages(on: "trellis/deadletter").count == 1)
        }
    }
}
