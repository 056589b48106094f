import Foundation
import Testing
import TrellisCore
import TrellisMQTT
import TrellisRelay
import TrellisTestSupport

/// The 20-press history, on the engine over SQLite and PostgreSQL: capped, oldest first, ISO 8601
/// UTC with milliseconds.
@Suite("Buttons: history")
struct ButtonHistoryTests {
    @Test(
        "25 presses leave the newest 20 in the history, oldest first, in the state and the registration",
        arguments: StoreKind.bothStores)
    func historyCap(kind: StoreKind) async throws {
        try await withRecorder(kind) { relay async throws in
            for second in 1...25 { await relay.press("long", at: second) }
            let states = relay.texts(on: "p2o/buttons/long/state")
            try #require(states.count == 25)
            #expect(states[19] == Buttons.state("long", total: 20, history: 1...20))
            #expect(states[20] == Buttons.state("long", total: 21, history: 2...21))
            #expect(states[24] == Buttons.state("long", total: 25, history: 6...25))

            await relay.send(client: "reader", "register", "long")
            #expect(
                relay.texts(on: "p2o/clients/reader/register-response")
                    == [Buttons.registered("long", count: 0, history: 6...25)])
            let snapshot = try #require(try await relay.store.button(id: "long"))
            #expect(snapshot.total == 25)
            #expect(snapshot.history.map(ISO8601Time.format) == (6...25).map(Buttons.time))
        }
    }

    @Test(
        "stated times are written in UTC with milliseconds and ordered by the time of the press",
        arguments: StoreKind.bothStores)
    func statedTimes(kind: StoreKind) async throws {
        try await withRecorder(kind) { relay async throws in
            for payload in ["2026-11-22T11:40:03+01:00", "2026-11-22T10:40:01Z", "2026-11-22T05:10:02.0004-05:30"] {
                await relay.send(payload, on: "p2o/buttons/clock/press")
            }
            #expect(
                relay.texts(on: "p2o/buttons/clock/state") == [
                    Buttons.state("clock", total: 1, history: [3]),
                    Buttons.state("clock", total: 2, history: [1, 3]),
                    Buttons.state("clock", total: 3, history: 1...3)
                ])
            #expect(Buttons.time(1) == "2026-11-22T10:40:01.000Z")
        }
    }

    @Test("an empty press is dated when Trellis receives it", arguments: StoreKind.bothStores)
    func emptyPressIsNow(kind: StoreKind) async throws {
        try await withRecorder(kind) { relay async throws in
            let first = Date(timeIntervalSince1970: 1_795_344_000.25)
            let second = first.addingTimeInterval(7.5)
            await relay.send("", on: "p2o/buttons/now/press", at: first)
            await relay.send(" \n", on: "p2o/buttons/now/press", at: second)
            let states = relay.messages(on: "p2o/buttons/now/state")
            #expect(states.count == 2)
            #expect(
                states.last?.text
                    == #"{"history":["\#(ISO8601Time.format(first))","\#(ISO8601Time.format(second))"],"id":"now","total":2}"#
            )
            #expect(ISO8601Time.format(first) == "2026-11-22T10:40:00.250Z")
        }
    }

    @Test("histories of different buttons are kept apart", arguments: StoreKind.bothStores)
    func separateHistories(kind: StoreKind) async throws {
        try await withRecorder(kind) { relay async throws in
            for second in 1...4 { await relay.press(second.isMultiple(of: 2) ? "even" : "odd", at: second) }
            await relay.press("küche", at: 9)
            #expect(relay.latest(on: "p2o/buttons/even/state") == Buttons.state("even", total: 2, history: [2, 4]))
            #expect(relay.latest(on: "p2o/buttons/odd/state") == Buttons.state("odd", total: 2, history: [1, 3]))
            #expect(relay.latest(on: "p2o/buttons/küche/state") == Buttons.state("küche", total: 1, history: [9]))
        }
    }
}
