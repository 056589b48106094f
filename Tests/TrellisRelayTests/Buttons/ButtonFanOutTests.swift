import Foundation
import Testing
import TrellisCore
import TrellisMQTT
import TrellisRelay
import TrellisStore
import TrellisTestSupport

/// Presses fanned out to registered clients that are online; missed counts for those offline. The
/// fan-out's logic runs on the engine over SQLite and PostgreSQL; a client's will, which only a
/// broker sends, runs through one.
@Suite("Buttons: fan-out and missed counts")
struct ButtonFanOutTests {
    @Test(
        "three presses reach two registered online clients; the retained state shows total 3",
        arguments: StoreKind.bothStores)
    func threePressesTwoClients(kind: StoreKind) async throws {
        try await withRecorder(kind) { relay async throws in
            for name in ["a", "b"] { await relay.register(name, for: "door") }
            #expect(relay.texts(on: "p2o/clients/a/register-response") == [#"{"status":"success"}"#])
            // A third client, online but registered for another button, gets nothing.
            await relay.register("c", for: "gate")

            for second in 1...3 { await relay.press("door", at: second) }
            for name in ["a", "b"] {
                let presses = relay.messages(on: "p2o/clients/\(name)/button-press")
                #expect(presses.map(\.text) == ["door", "door", "door"])
                #expect(presses.allSatisfy { !$0.retain })
            }
            let state = try #require(relay.messages(on: "p2o/buttons/door/state").last)
            #expect(state.retain)
            #expect(state.text == Buttons.state("door", total: 3, history: 1...3))
            #expect(relay.messages(on: "p2o/clients/c/button-press").isEmpty)
            #expect(try await relay.store.client(id: "a")?.registrations == [.init(button: "door", missed: 0)])
        }
    }

    @Test(
        "a client offline for five presses gets count 5 on its next registration, then 0",
        arguments: StoreKind.bothStores)
    func missedWhileOffline(kind: StoreKind) async throws {
        try await withRecorder(kind) { relay async throws in
            await relay.register("hall", for: "bell")
            #expect(relay.texts(on: "p2o/clients/hall/register-response") == [#"{"status":"success"}"#])
            await relay.send(client: "hall", "status", "offline")
            for second in 1...5 { await relay.press("bell", at: second) }
            #expect(relay.latest(on: "p2o/buttons/bell/state") == Buttons.state("bell", total: 5, history: 1...5))
            #expect(try await relay.store.client(id: "hall")?.registrations == [.init(button: "bell", missed: 5)])

            await relay.send(client: "hall", "status", "online")
            #expect(relay.messages(on: "p2o/clients/hall/connection-response").count == 2)
            // Coming online alone keeps the count: the registration reports it.
            #expect(try await relay.store.client(id: "hall")?.registrations == [.init(button: "bell", missed: 5)])
            await relay.send(client: "hall", "register", "bell")
            await relay.send(client: "hall", "register", "bell")
            let answers = relay.texts(on: "p2o/clients/hall/register-response")
            #expect(answers.count == 3)
            #expect(answers.dropFirst().first == Buttons.registered("bell", count: 5, history: 1...5))
            #expect(answers.last == Buttons.registered("bell", count: 0, history: 1...5))
            #expect(relay.messages(on: "p2o/clients/hall/button-press").isEmpty)

            await relay.press("bell", at: 6)
            #expect(relay.texts(on: "p2o/clients/hall/button-press") == ["bell"])
        }
    }

    @Test("unregister stops the fan-out to that client only", arguments: StoreKind.bothStores)
    func unregisterStopsFanOut(kind: StoreKind) async throws {
        try await withRecorder(kind) { relay async throws in
            for name in ["stay", "go"] { await relay.register(name, for: "bell") }
            await relay.press("bell", at: 1)
            #expect(relay.texts(on: "p2o/clients/go/button-press") == ["bell"])
            await relay.send(client: "go", "unregister", "bell")
            #expect(relay.texts(on: "p2o/clients/go/unregister-response") == [#"{"status":"success"}"#])
            await relay.press("bell", at: 2)
            await relay.press("bell", at: 3)
            #expect(relay.messages(on: "p2o/clients/stay/button-press").count == 3)
            #expect(relay.messages(on: "p2o/clients/go/button-press").count == 1)
            #expect(try await relay.store.client(id: "go")?.registrations == [])
        }
    }

    @Test("a client whose will (offline) fires is treated as offline")
    func willMakesOffline() async throws {
        try await withRelay { relay in
            let (watcher, inbox) = try await relay.connectCollecting("p2o/clients/tab/#")
            let tablet = try await relay.connect(id: "tab") {
                $0.will = MQTTWill(
                    topic: "p2o/clients/tab/status", payload: Array("offline".utf8), qos: .atLeastOnce, retain: true)
            }
            try await Buttons.send(tablet, "tab", "status", "online", retain: true)
            try await Buttons.send(tablet, "tab", "register", "gate")
            try await inbox.messages(on: "p2o/clients/tab/register-response")
            try await Buttons.press(watcher, "gate", at: 1)
            try await inbox.messages(on: "p2o/clients/tab/button-press")

            tablet.dropConnectionUncleanly()
            await tablet.shutdown()
            try await inbox.wait("the will") { $0.last { $0.topic == "p2o/clients/tab/status" }?.text == "offline" }
            // The will went through the broker before these presses, so Trellis handled it first.
            for second in 2...3 { try await Buttons.press(watcher, "gate", at: second) }
            try await Buttons.send(watcher, "tab", "register", "gate")
            let responses = try await inbox.messages(on: "p2o/clients/tab/register-response", count: 2)
            #expect(responses[1].text == Buttons.registered("gate", count: 2, history: 1...3))
            #expect(await inbox.received(on: "p2o/clients/tab/button-press").count == 1)
        }
    }
}
