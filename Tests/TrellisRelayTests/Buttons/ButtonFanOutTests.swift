import Foundation
import Testing
import TrellisCore
import TrellisMQTT
import TrellisRelay
import TrellisStore
import TrellisTestSupport

/// Presses fanned out to registered clients that are online; missed counts for those offline.
@Suite("Buttons: fan-out and missed counts", .serialized)
struct ButtonFanOutTests {
    @Test("three presses reach two registered online clients; the retained state shows total 3")
    func threePressesTwoClients() async throws {
        try await withRelay { relay in
            let a = try await relay.connect(), b = try await relay.connect(), button = try await relay.connect()
            let inboxA = await MessageCollector.collecting(a), inboxB = await MessageCollector.collecting(b)
            try await a.subscribe("p2o/clients/a/#")
            try await b.subscribe("p2o/clients/b/#")
            for (client, name) in [(a, "a"), (b, "b")] {
                try await Buttons.register(client, name, for: "door")
            }
            try await inboxA.messages(on: "p2o/clients/a/register-response")
            try await inboxB.messages(on: "p2o/clients/b/register-response")
            // A third client, online but registered for another button, gets nothing.
            let (other, otherInbox) = try await relay.connectCollecting("p2o/clients/c/button-press")
            try await Buttons.register(other, "c", for: "gate")

            for second in 1...3 { try await Buttons.press(button, "door", at: second) }
            for (inbox, name) in [(inboxA, "a"), (inboxB, "b")] {
                let presses = try await inbox.messages(on: "p2o/clients/\(name)/button-press", count: 3)
                #expect(presses.map(\.text) == ["door", "door", "door"])
                #expect(presses.allSatisfy { !$0.retain })
            }
            let (_, lateInbox) = try await relay.connectCollecting("p2o/buttons/door/state")
            let state = try await lateInbox.messages(on: "p2o/buttons/door/state")
            #expect(state[0].retain)
            #expect(state[0].text == Buttons.state("door", total: 3, history: 1...3))
            #expect(await otherInbox.messages.isEmpty)
            #expect(try await relay.store.client(id: "a")?.registrations == [.init(button: "door", missed: 0)])
        }
    }

    @Test("a client offline for five presses gets count 5 on its next registration, then 0")
    func missedWhileOffline() async throws {
        try await withRelay { relay in
            let app = try await relay.connect(), button = try await relay.connect()
            let inbox = await MessageCollector.collecting(app)
            try await app.subscribe("p2o/clients/hall/+")
            try await Buttons.register(app, "hall", for: "bell")
            let first = try await inbox.messages(on: "p2o/clients/hall/register-response")
            #expect(first[0].text == #"{"status":"success"}"#)
            try await Buttons.send(app, "hall", "status", "offline")
            try await app.subscribe("p2o/buttons/bell/state")
            for second in 1...5 { try await Buttons.press(button, "bell", at: second) }
            let states = try await inbox.messages(on: "p2o/buttons/bell/state", count: 5)
            #expect(states[4].text == Buttons.state("bell", total: 5, history: 1...5))
            #expect(try await relay.store.client(id: "hall")?.registrations == [.init(button: "bell", missed: 5)])

            try await Buttons.send(app, "hall", "status", "online")
            try await inbox.messages(on: "p2o/clients/hall/connection-response", count: 2)
            // Coming online alone keeps the count: the registration reports it.
            #expect(try await relay.store.client(id: "hall")?.registrations == [.init(button: "bell", missed: 5)])
            try await Buttons.send(app, "hall", "register", "bell")
            try await Buttons.send(app, "hall", "register", "bell")
            let answers = try await inbox.messages(on: "p2o/clients/hall/register-response", count: 3)
            #expect(answers[1].text == Buttons.registered("bell", count: 5, history: 1...5))
            #expect(answers[2].text == Buttons.registered("bell", count: 0, history: 1...5))
            #expect(await inbox.received(on: "p2o/clients/hall/button-press").isEmpty)

            try await Buttons.press(button, "bell", at: 6)
            let press = try await inbox.messages(on: "p2o/clients/hall/button-press")
            #expect(press[0].text == "bell")
        }
    }

    @Test("unregister stops the fan-out to that client only")
    func unregisterStopsFanOut() async throws {
        try await withRelay { relay in
            let (app, inbox) = try await relay.connectCollecting(
                "p2o/clients/+/button-press", "p2o/clients/+/unregister-response")
            for name in ["stay", "go"] {
                try await Buttons.register(app, name, for: "bell")
            }
            try await Buttons.press(app, "bell", at: 1)
            try await inbox.messages(on: "p2o/clients/go/button-press")
            try await Buttons.send(app, "go", "unregister", "bell")
            let done = try await inbox.messages(on: "p2o/clients/go/unregister-response")
            #expect(done[0].text == #"{"status":"success"}"#)
            try await Buttons.press(app, "bell", at: 2)
            try await Buttons.press(app, "bell", at: 3)
            try await inbox.messages(on: "p2o/clients/stay/button-press", count: 3)
            #expect(await inbox.received(on: "p2o/clients/go/button-press").count == 1)
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
