import Foundation
import Testing
import TrellisCore
import TrellisMQTT
import TrellisRelay
import TrellisStore
import TrellisTestSupport

/// Registrations, counts, histories and retained presses across restarts of Trellis (on the engine
/// over both stores); presses it was not there for, which only a broker keeps for it.
@Suite("Buttons: durability", .serialized)
struct ButtonDurabilityTests {
    @Test(
        "registrations, missed counts, totals and histories survive a restart of Trellis (the engine on its store again)",
        arguments: StoreKind.bothStores)
    func survivesRestart(kind: StoreKind) async throws {
        try await withStorePlace(kind) { open in
            try await closing(try await open()) { store async throws in
                let relay = EngineRecorder(EngineHarness(store: store))
                await relay.register("on", for: "lamp")
                await relay.register("off", for: "lamp", status: "offline")
                for second in 1...3 { await relay.press("lamp", at: second) }
                #expect(relay.messages(on: "p2o/clients/on/button-press").count == 3)
                try await store.flush()
            }
            try await closing(try await open()) { store async throws in
                let relay = EngineRecorder(EngineHarness(store: store))
                // The registration of "on" is still there: the next press reaches it.
                await relay.press("lamp", at: 4)
                #expect(relay.texts(on: "p2o/clients/on/button-press") == ["lamp"])
                #expect(relay.latest(on: "p2o/buttons/lamp/state") == Buttons.state("lamp", total: 4, history: 1...4))
                await relay.send(client: "off", "register", "lamp")
                #expect(
                    relay.texts(on: "p2o/clients/off/register-response")
                        == [Buttons.registered("lamp", count: 4, history: 1...4)])
                #expect(relay.messages(on: "p2o/clients/off/button-press").isEmpty)
            }
        }
    }

    @Test("presses published at QoS 1 while Trellis is stopped are counted after it starts")
    func pressesWhileStopped() async throws {
        try await withRelay { relay in
            let (app, inbox) = try await relay.connectCollecting("p2o/clients/kit/+")
            try await Buttons.register(app, "kit", for: "lamp")
            try await inbox.messages(on: "p2o/clients/kit/register-response")
            try await Buttons.press(app, "lamp", at: 1)
            try await inbox.messages(on: "p2o/clients/kit/button-press")

            try await relay.stopRelay()
            for second in 2...4 { try await Buttons.press(app, "lamp", at: second, qos: .atLeastOnce) }
            try await Buttons.send(app, "kit", "status", "offline")
            for second in 5...6 { try await Buttons.press(app, "lamp", at: second, qos: .atLeastOnce) }
            try await relay.startRelay()

            // While it was stopped the client was online for three presses, then offline for two.
            try await inbox.messages(on: "p2o/clients/kit/button-press", count: 4)
            try await Buttons.send(app, "kit", "register", "lamp")
            let answers = try await inbox.messages(on: "p2o/clients/kit/register-response", count: 2)
            #expect(answers[1].text == Buttons.registered("lamp", count: 2, history: 1...6))
            #expect(await inbox.received(on: "p2o/clients/kit/button-press").count == 4)
            #expect(try await relay.store.button(id: "lamp")?.total == 6)
        }
    }

    @Test(
        "a retained press counts once when it happens and is ignored when Trellis subscribes again",
        arguments: StoreKind.bothStores)
    func retainedPress(_ kind: StoreKind) async throws {
        try await withRestarts(kind) { relay, restart async throws in
            // Published retained, it reaches Trellis live with the retain flag clear. An empty retained
            // payload would clear the retained message, so this press states its time.
            await relay.send(Buttons.time(1), on: "p2o/buttons/porch/press")
            #expect(relay.texts(on: "p2o/buttons/porch/state") == [Buttons.state("porch", total: 1, history: [1])])

            // Started again, Trellis subscribes and the broker hands it the retained press, flagged.
            let again = try await restart()
            await again.send(Buttons.time(1), on: "p2o/buttons/porch/press", retain: true)
            let letters = again.messages(on: "trellis/deadletter")
            #expect(letters.count == 1)
            #expect(
                try Buttons.letter(try #require(letters.first))
                    == ["payload": Buttons.time(1), "reason": "retained_press", "topic": "p2o/buttons/porch/press"],
                "\(again.texts(on: "trellis/deadletter"))")
            #expect(
                try await again.store.button(id: "porch")
                    == ButtonState(id: "porch", total: 1, history: [ISO8601Time.parse(Buttons.time(1))!]))
            #expect(again.messages(on: "p2o/buttons/porch/state").isEmpty)
        }
    }
}
