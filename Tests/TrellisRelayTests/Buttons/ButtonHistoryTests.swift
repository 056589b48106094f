import Foundation
import Testing
import TrellisCore
import TrellisMQTT
import TrellisRelay
import TrellisTestSupport

/// The 20-press history: capped, oldest first, ISO 8601 UTC with milliseconds.
@Suite("Buttons: history", .serialized)
struct ButtonHistoryTests {
    @Test("25 presses leave the newest 20 in the history, oldest first, in the state and the registration")
    func historyCap() async throws {
        try await withRelay { relay in
            let (app, inbox) = try await relay.connectCollecting(
                "p2o/buttons/long/state", "p2o/clients/reader/register-response")
            for second in 1...25 { try await Buttons.press(app, "long", at: second) }
            let states = try await inbox.messages(on: "p2o/buttons/long/state", count: 25)
            #expect(states[19].text == Buttons.state("long", total: 20, history: 1...20))
            #expect(states[20].text == Buttons.state("long", total: 21, history: 2...21))
            #expect(states[24].text == Buttons.state("long", total: 25, history: 6...25))

            try await Buttons.send(app, "reader", "register", "long")
            let answer = try await inbox.messages(on: "p2o/clients/reader/register-response")
            #expect(answer[0].text == Buttons.registered("long", count: 0, history: 6...25))
            let snapshot = try #require(try await relay.store.button(id: "long"))
            #expect(snapshot.total == 25)
            #expect(snapshot.history.map(ISO8601Time.format) == (6...25).map(Buttons.time))
        }
    }

    @Test("stated times are written in UTC with milliseconds and ordered by the time of the press")
    func statedTimes() async throws {
        try await withRelay { relay in
            let (app, inbox) = try await relay.connectCollecting("p2o/buttons/clock/state")
            for payload in ["2026-11-22T11:40:03+01:00", "2026-11-22T10:40:01Z", "2026-11-22T05:10:02.0004-05:30"] {
                try await app.publishAndWait(topic: "p2o/buttons/clock/press", payload: Array(payload.utf8))
            }
            let states = try await inbox.messages(on: "p2o/buttons/clock/state", count: 3)
            #expect(
                states.map(\.text) == [
                    Buttons.state("clock", total: 1, history: [3]),
                    Buttons.state("clock", total: 2, history: [1, 3]),
                    Buttons.state("clock", total: 3, history: 1...3)
                ])
            #expect(Buttons.time(1) == "2026-11-22T10:40:01.000Z")
        }
    }

    @Test("an empty press is dated when Trellis receives it")
    func emptyPressIsNow() async throws {
        try await withRelay { relay in
            let (app, inbox) = try await relay.connectCollecting("p2o/buttons/now/state")
            let before = Date()
            try await app.publishAndWait(topic: "p2o/buttons/now/press", payload: [])
            try await app.publishAndWait(topic: "p2o/buttons/now/press", payload: Array(" \n".utf8))
            let states = try await inbox.messages(on: "p2o/buttons/now/state", count: 2)
            let after = Date()
            let object = try #require(try JSONSerialization.jsonObject(with: Data(states[1].payload)) as? [String: Any])
            let history = try #require(object["history"] as? [String])
            #expect(object["total"] as? Int == 2)
            #expect(history.count == 2)
            for text in history {
                #expect(text.count == 24 && text.hasSuffix("Z") && text.dropLast(4).hasSuffix("."))
                let date = try #require(ISO8601Time.parse(text))
                #expect(ISO8601Time.milliseconds(date) >= ISO8601Time.milliseconds(before))
                #expect(ISO8601Time.milliseconds(date) <= ISO8601Time.milliseconds(after))
            }
            #expect(history == history.sorted())
        }
    }

    @Test("histories of different buttons are kept apart")
    func separateHistories() async throws {
        try await withRelay { relay in
            let (app, inbox) = try await relay.connectCollecting("p2o/buttons/+/state")
            for second in 1...4 { try await Buttons.press(app, second.isMultiple(of: 2) ? "even" : "odd", at: second) }
            try await Buttons.press(app, "küche", at: 9)
            try await inbox.messages(on: "p2o/buttons/küche/state")
            #expect(
                await inbox.received(on: "p2o/buttons/even/state").last?.text
                    == Buttons.state("even", total: 2, history: [2, 4]))
            #expect(
                await inbox.received(on: "p2o/buttons/odd/state").last?.text
                    == Buttons.state("odd", total: 2, history: [1, 3]))
            #expect(
                await inbox.received(on: "p2o/buttons/küche/state").last?.text
                    == Buttons.state("küche", total: 1, history: [9]))
        }
    }
}
