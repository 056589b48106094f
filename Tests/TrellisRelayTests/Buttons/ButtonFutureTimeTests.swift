import Foundation
import Testing
import TrellisCore
import TrellisMQTT
import TrellisRelay
import TrellisTestSupport

/// A press dated far ahead of the clock, through a real broker: refused, so it cannot stay the
/// newest press for ever, and the real presses after it are counted and shown.
@Suite("Buttons: presses dated in the future", .serialized)
struct ButtonFutureTimeTests {
    @Test("a press dated 9999 is dead-lettered as future_time; a real press afterwards is counted and in the history")
    func year9999() async throws {
        try await withRelay { relay in
            let (app, inbox) = try await relay.connectCollecting(
                "trellis/deadletter", "p2o/buttons/+/state",
                "p2o/clients/reader/register-response")
            let future = "9999-01-01T00:00:00Z"
            try await app.publishAndWait(topic: "p2o/buttons/door/press", payload: Array(future.utf8))
            let letters = try await inbox.messages(on: "trellis/deadletter")
            #expect(
                try Buttons.letter(letters[0]) == [
                    "payload": future, "reason": "future_time", "topic": "p2o/buttons/door/press"
                ])
            #expect(try await relay.store.button(id: "door") == nil, "nothing counted or stored")

            // Real presses afterwards, one stating its time, one pressed now: both counted, the
            // later one the newest of the history.
            let stated = ISO8601Time.format(Date().addingTimeInterval(-60))
            try await app.publishAndWait(topic: "p2o/buttons/door/press", payload: Array(stated.utf8))
            try await app.publishAndWait(topic: "p2o/buttons/door/press", payload: [])
            let states = try await inbox.messages(on: "p2o/buttons/door/state", count: 2)
            let object = try #require(try JSONSerialization.jsonObject(with: Data(states[1].payload)) as? [String: Any])
            let history = try #require(object["history"] as? [String])
            #expect(object["total"] as? Int == 2)
            #expect(history.count == 2 && history[0] == stated, "\(history)")
            let pressedNow = try #require(ISO8601Time.parse(history[1]))
            #expect(abs(pressedNow.timeIntervalSinceNow) < 60)

            try await Buttons.send(app, "reader", "register", "door")
            let answer = try await inbox.messages(on: "p2o/clients/reader/register-response")
            #expect(
                answer[0].text
                    == #"{"button":{"count":0,"history":["\#(history[0])","\#(history[1])"],"id":"door"},"status":"success"}"#
            )
            #expect(await inbox.received(on: "trellis/deadletter").count == 1)
        }
    }
}
