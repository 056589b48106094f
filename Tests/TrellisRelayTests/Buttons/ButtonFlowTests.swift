import Foundation
import Testing
import TrellisCore
import TrellisMQTT
import TrellisRelay
import TrellisTestSupport

/// Button presses, registrations and fan-out through a real broker.
@Suite("Buttons through a real broker", .serialized)
struct ButtonFlowTests {
    /// An ISO press time `second` seconds after a fixed moment, so histories are exact.
    static func time(_ second: Int) -> String {
        ISO8601Formatting.at(1_795_344_000 + second)
    }

    static func press(_ client: MQTTClient, _ button: String, at second: Int) async throws {
        try await client.publishAndWait(topic: "p2o/buttons/\(button)/press", payload: Array(time(second).utf8))
    }

    @Test("online is answered on connection-response; an invalid client id gets failed")
    func connectionResponse() async throws {
        try await withRelay { relay in
            let app = try await relay.connect()
            let inbox = await MessageCollector.collecting(app)
            try await app.subscribe("p2o/clients/+/connection-response")
            try await app.publishAndWait(topic: "p2o/clients/phone/status", payload: Array("online".utf8))
            let ok = try await inbox.messages(on: "p2o/clients/phone/connection-response")
            #expect(ok[0].text == #"{"status":"success"}"#)
            let long = String(repeating: "c", count: 65)
            try await app.publishAndWait(topic: "p2o/clients/\(long)/status", payload: Array("online".utf8))
            let failed = try await inbox.messages(on: "p2o/clients/\(long)/connection-response")
            #expect(failed[0].text == #"{"error":"the client id has 65 characters; at most 64 are allowed","status":"failed"}"#)
        }
    }

    @Test("register before any press has no button; presses fan out to registered online clients; state is retained")
    func registerAndFanOut() async throws {
        try await withRelay { relay in
            let a = try await relay.connect(), b = try await relay.connect()
            let inboxA = await MessageCollector.collecting(a), inboxB = await MessageCollector.collecting(b)
            try await a.subscribe("p2o/clients/a/#")
            try await b.subscribe("p2o/clients/b/#")
            for (client, name) in [(a, "a"), (b, "b")] {
                try await client.publishAndWait(topic: "p2o/clients/\(name)/status", payload: Array("online".utf8))
                try await client.publishAndWait(topic: "p2o/clients/\(name)/register", payload: Array("door".utf8))
            }
            let first = try await inboxA.messages(on: "p2o/clients/a/register-response")
            #expect(first[0].text == #"{"status":"success"}"#)

            for second in 1...3 { try await Self.press(a, "door", at: second) }
            for inbox in [inboxA, inboxB] {
                let name = inbox === inboxA ? "a" : "b"
                let presses = try await inbox.messages(on: "p2o/clients/\(name)/button-press", count: 3)
                #expect(presses.map(\.text) == ["door", "door", "door"])
            }
            let late = try await relay.connect()
            let lateInbox = await MessageCollector.collecting(late)
            try await late.subscribe("p2o/buttons/door/state")
            let state = try await lateInbox.messages(on: "p2o/buttons/door/state")
            #expect(state[0].retain)
            #expect(state[0].text == #"{"history":["\#(Self.time(1))","\#(Self.time(2))","\#(Self.time(3))"],"id":"door","total":3}"#)
        }
    }

    @Test("a client offline for five presses gets count 5 on its next registration, then 0; unregister stops the fan-out")
    func missedWhileOffline() async throws {
        try await withRelay { relay in
            let app = try await relay.connect()
            let inbox = await MessageCollector.collecting(app)
            try await app.subscribe("p2o/clients/hall/#")
            try await app.publishAndWait(topic: "p2o/clients/hall/status", payload: Array("online".utf8))
            try await app.publishAndWait(topic: "p2o/clients/hall/register", payload: Array("bell".utf8))
            try await inbox.messages(on: "p2o/clients/hall/register-response")
            try await app.publishAndWait(topic: "p2o/clients/hall/status", payload: Array("offline".utf8))
            for second in 1...5 { try await Self.press(app, "bell", at: second) }
            try await app.publishAndWait(topic: "p2o/clients/hall/status", payload: Array("online".utf8))
            try await app.publishAndWait(topic: "p2o/clients/hall/register", payload: Array("bell".utf8))
            let second = try await inbox.messages(on: "p2o/clients/hall/register-response", count: 2)
            let history = (1...5).map { "\"\(Self.time($0))\"" }.joined(separator: ",")
            #expect(second[1].text == #"{"button":{"count":5,"history":[\#(history)],"id":"bell"},"status":"success"}"#)
            #expect(await inbox.received(on: "p2o/clients/hall/button-press").isEmpty)

            try await app.publishAndWait(topic: "p2o/clients/hall/register", payload: Array("bell".utf8))
            let third = try await inbox.messages(on: "p2o/clients/hall/register-response", count: 3)
            #expect(third[2].text?.contains(#""count":0"#) == true)

            try await Self.press(app, "bell", at: 6)
            try await inbox.messages(on: "p2o/clients/hall/button-press")
            try await app.publishAndWait(topic: "p2o/clients/hall/unregister", payload: Array("bell".utf8))
            let unregistered = try await inbox.messages(on: "p2o/clients/hall/unregister-response")
            #expect(unregistered[0].text == #"{"status":"success"}"#)
            try await Self.press(app, "bell", at: 7)
            try await app.publishAndWait(topic: "p2o/clients/hall/register", payload: Array("other".utf8))
            try await inbox.messages(on: "p2o/clients/hall/register-response", count: 4)
            #expect(await inbox.received(on: "p2o/clients/hall/button-press").count == 1)
        }
    }

    @Test("25 presses leave the newest 20 in the history, oldest first")
    func historyCap() async throws {
        try await withRelay { relay in
            let app = try await relay.connect()
            let inbox = await MessageCollector.collecting(app)
            try await app.subscribe("p2o/buttons/long/state")
            for second in 1...25 { try await Self.press(app, "long", at: second) }
            let states = try await inbox.messages(on: "p2o/buttons/long/state", count: 25)
            let history = (6...25).map { "\"\(Self.time($0))\"" }.joined(separator: ",")
            #expect(states[24].text == #"{"history":[\#(history)],"id":"long","total":25}"#)
        }
    }

    @Test("a client whose will says offline misses presses like any offline client")
    func willMakesOffline() async throws {
        try await withRelay { relay in
            let watcher = try await relay.connect()
            let inbox = await MessageCollector.collecting(watcher)
            try await watcher.subscribe("p2o/clients/tab/#")
            let tablet = try await relay.connect(id: "tab") {
                $0.will = MQTTWill(topic: "p2o/clients/tab/status", payload: Array("offline".utf8), qos: .atLeastOnce, retain: true)
            }
            try await tablet.publishAndWait(topic: "p2o/clients/tab/status", payload: Array("online".utf8), retain: true)
            try await tablet.publishAndWait(topic: "p2o/clients/tab/register", payload: Array("gate".utf8))
            try await inbox.messages(on: "p2o/clients/tab/register-response")
            tablet.dropConnectionUncleanly()
            await tablet.shutdown()
            try await inbox.wait("the will") { $0.last { $0.topic == "p2o/clients/tab/status" }?.text == "offline" }
            // The will reached Trellis before this press: both went through the same broker, in order.
            try await Self.press(watcher, "gate", at: 1)
            try await watcher.publishAndWait(topic: "p2o/clients/tab/register", payload: Array("gate".utf8))
            let responses = try await inbox.messages(on: "p2o/clients/tab/register-response", count: 2)
            #expect(responses[1].text?.contains(#""count":1"#) == true)
            #expect(await inbox.received(on: "p2o/clients/tab/button-press").isEmpty)
        }
    }

    @Test("invalid ids and payloads get failed or a dead letter with their reason; retained presses are ignored")
    func badInput() async throws {
        try await withRelay { relay in
            let app = try await relay.connect()
            let inbox = await MessageCollector.collecting(app)
            try await app.subscribe("trellis/deadletter")
            try await app.subscribe("p2o/clients/x/register-response")
            try await app.publishAndWait(topic: "p2o/clients/x/register", payload: Array("a#b".utf8))
            let failed = try await inbox.messages(on: "p2o/clients/x/register-response")
            #expect(failed[0].text == #"{"error":"the button id contains '#', which cannot be part of an MQTT topic level","status":"failed"}"#)
            try await app.publishAndWait(topic: "p2o/buttons/door/press", payload: Array("soon".utf8))
            try await app.publishAndWait(topic: "p2o/clients/x/status", payload: Array("maybe".utf8))
            let letters = try await inbox.messages(on: "trellis/deadletter", count: 3)
            #expect(letters.map { Self.reason(of: $0) } == ["invalid_registration", "invalid_press_time", "invalid_status"])
            #expect(try await relay.store.button(id: "door") == nil)
        }
    }

    @Test("a retained press counts once when it happens, and is never replayed when Trellis subscribes again")
    func retainedPress() async throws {
        try await withRelay { relay in
            let app = try await relay.connect()
            let inbox = await MessageCollector.collecting(app)
            try await app.subscribe("trellis/deadletter")
            // An empty retained payload would clear the retained message, so this press states its time.
            try await app.publishAndWait(topic: "p2o/buttons/porch/press", payload: Array(Self.time(1).utf8), retain: true)
            try await relay.stopRelay()
            try await relay.startRelay()
            let letters = try await inbox.messages(on: "trellis/deadletter")
            #expect(Self.reason(of: letters[0]) == "retained_press")
            #expect(try await relay.store.button(id: "porch")?.total == 1)
        }
    }

    /// The `reason` of a dead-letter record.
    static func reason(of message: MQTTMessage) -> String {
        String(message.text?.components(separatedBy: #""reason":""#).last?.prefix { $0 != "\"" } ?? "")
    }

    @Test("state and counts survive a restart of Trellis; QoS 1 presses sent while it is stopped are counted")
    func durability() async throws {
        try await withRelay { relay in
            let app = try await relay.connect()
            let inbox = await MessageCollector.collecting(app)
            try await app.subscribe("p2o/clients/kit/register-response")
            try await app.publishAndWait(topic: "p2o/clients/kit/status", payload: Array("offline".utf8))
            try await app.publishAndWait(topic: "p2o/clients/kit/register", payload: Array("lamp".utf8))
            try await inbox.messages(on: "p2o/clients/kit/register-response")
            for second in 1...2 { try await Self.press(app, "lamp", at: second) }
            try await app.publishAndWait(topic: "p2o/clients/kit/status", payload: Array("offline".utf8))

            try await relay.stopRelay()
            for second in 3...5 { try await Self.press(app, "lamp", at: second) }
            try await relay.startRelay()

            try await app.publishAndWait(topic: "p2o/clients/kit/register", payload: Array("lamp".utf8))
            let answers = try await inbox.messages(on: "p2o/clients/kit/register-response", count: 2)
            let history = (1...5).map { "\"\(Self.time($0))\"" }.joined(separator: ",")
            #expect(answers[1].text == #"{"button":{"count":5,"history":[\#(history)],"id":"lamp"},"status":"success"}"#)
            #expect(try await relay.store.button(id: "lamp")?.total == 5)
        }
    }

    @Test("with 10,000 buttons and 1,000 clients in the state, a press reaches 100 registered clients")
    func scale() async throws {
        try await withRelay { relay in
            let store = try relay.store
            let now = Date()
            for index in 0..<1_000 {
                try await store.setClientStatus(client: "c\(index)", online: true, at: now)
            }
            for index in 0..<10_000 {
                _ = try await store.recordPress(button: "b\(index)", at: now, historyLimit: 20)
            }
            for index in 0..<100 {
                _ = try await store.register(client: "c\(index)", button: "b0", at: now)
            }
            let listener = try await relay.connect()
            let inbox = await MessageCollector.collecting(listener)
            try await listener.subscribe("p2o/clients/+/button-press")
            try await listener.publishAndWait(topic: "p2o/buttons/b0/press", payload: [])
            let deliveries = try await inbox.wait(timeout: .seconds(30), "100 deliveries") { $0.count >= 100 }
            _ = deliveries
            let topics = Set(await inbox.messages.map(\.topic))
            #expect(topics == Set((0..<100).map { "p2o/clients/c\($0)/button-press" }))
        }
    }
}

/// ISO 8601 text of whole seconds since 1970, as Trellis writes it.
enum ISO8601Formatting {
    static func at(_ seconds: Int) -> String {
        ISO8601Time.format(Date(timeIntervalSince1970: TimeInterval(seconds)))
    }
}
