import Foundation
import Testing
import TrellisCore
import TrellisMQTT
import TrellisRelay
import TrellisStore
import TrellisTestSupport

/// `status` → `connection-response`, `register` → `register-response`, `unregister` →
/// `unregister-response`, through a real broker.
@Suite("Buttons: connection and registration", .serialized)
struct ButtonConnectionTests {
    static let long = String(repeating: "c", count: 65)
    static let tooLong = #"{"error":"the client id has 65 characters; at most 64 are allowed","status":"failed"}"#

    @Test("online is answered with success; an invalid client id gets failed with an error")
    func connectionResponse() async throws {
        try await withRelay { relay in
            let (app, inbox) = try await relay.connectCollecting("p2o/clients/+/connection-response")
            try await Buttons.send(app, "phone", "status", "online")
            let ok = try await inbox.messages(on: "p2o/clients/phone/connection-response")
            #expect(ok[0].text == #"{"status":"success"}"#)
            #expect(
                try await relay.store.client(id: "phone") == ClientRecord(id: "phone", online: true, registrations: []))

            try await Buttons.send(app, Self.long, "status", "online")
            let failed = try await inbox.messages(on: "p2o/clients/\(Self.long)/connection-response")
            #expect(failed[0].text == Self.tooLong)
            #expect(try await relay.store.client(id: Self.long) == nil)

            let sixtyFour = String(repeating: "c", count: 64)
            try await Buttons.send(app, sixtyFour, "status", "online")
            let accepted = try await inbox.messages(on: "p2o/clients/\(sixtyFour)/connection-response")
            #expect(accepted[0].text == #"{"status":"success"}"#)

            try await Buttons.send(app, "küche", "status", "online")
            let unicode = try await inbox.messages(on: "p2o/clients/küche/connection-response")
            #expect(unicode[0].text == #"{"status":"success"}"#)
        }
    }

    @Test("offline is not answered; it is stored")
    func offlineIsSilent() async throws {
        try await withRelay { relay in
            let (app, inbox) = try await relay.connectCollecting("p2o/clients/+/connection-response")
            try await Buttons.send(app, "quiet", "status", "offline")
            try await Buttons.send(app, "loud", "status", "online")
            // Trellis handles messages in order: once loud is answered, quiet was handled.
            try await inbox.messages(on: "p2o/clients/loud/connection-response")
            #expect(await inbox.messages.map(\.topic) == ["p2o/clients/loud/connection-response"])
            #expect(try await relay.store.client(id: "quiet")?.online == false)
        }
    }

    @Test("register before any press of the button has no button member; a second client too")
    func registerBeforeAnyPress() async throws {
        try await withRelay { relay in
            let (app, inbox) = try await relay.connectCollecting("p2o/clients/+/register-response")
            try await Buttons.register(app, "a", for: "door")
            try await Buttons.send(app, "b", "register", "door\n")
            let a = try await inbox.messages(on: "p2o/clients/a/register-response")
            let b = try await inbox.messages(on: "p2o/clients/b/register-response")
            #expect(a[0].text == #"{"status":"success"}"#)
            #expect(b[0].text == #"{"status":"success"}"#)
            // A client without a status is taken to be online when it registers.
            #expect(
                try await relay.store.client(id: "b")
                    == ClientRecord(id: "b", online: true, registrations: [.init(button: "door", missed: 0)]))
            #expect(try await relay.store.button(id: "door") == nil)
        }
    }

    @Test(
        "invalid registrations get failed with the reason, and change nothing",
        arguments: [
            ("x", "", #"{"error":"the button id is empty","status":"failed"}"#),
            (
                "x", String(repeating: "b", count: 65),
                #"{"error":"the button id has 65 characters; at most 64 are allowed","status":"failed"}"#
            ),
            (
                "x", "a/b",
                #"{"error":"the button id contains '/', which cannot be part of an MQTT topic level","status":"failed"}"#
            ),
            (
                "x", "a+b",
                #"{"error":"the button id contains '+', which cannot be part of an MQTT topic level","status":"failed"}"#
            ),
            (
                "x", "a#b",
                #"{"error":"the button id contains '#', which cannot be part of an MQTT topic level","status":"failed"}"#
            ),
            (long, "door", tooLong)
        ])
    func invalidRegistration(client: String, button: String, answer: String) async throws {
        try await withRelay { relay in
            let (app, inbox) = try await relay.connectCollecting(
                "p2o/clients/+/register-response", "trellis/deadletter")
            try await Buttons.send(app, client, "register", button)
            let failed = try await inbox.messages(on: "p2o/clients/\(client)/register-response")
            #expect(failed[0].text == answer)
            let letter = try await inbox.messages(on: "trellis/deadletter")
            #expect(
                try Buttons.letter(letter[0])
                    == ["payload": button, "reason": "invalid_registration", "topic": "p2o/clients/\(client)/register"])
            #expect(try await relay.store.client(id: client) == nil)
        }
    }

    @Test("a registration payload that is not UTF-8 gets failed")
    func registrationNotUTF8() async throws {
        try await withRelay { relay in
            let (app, inbox) = try await relay.connectCollecting("p2o/clients/x/register-response")
            try await app.publishAndWait(topic: "p2o/clients/x/register", payload: [0x64, 0xff])
            let failed = try await inbox.messages(on: "p2o/clients/x/register-response")
            #expect(failed[0].text == #"{"error":"the button id is not valid UTF-8 text","status":"failed"}"#)
        }
    }

    @Test("unregister answers success once, then failed")
    func unregister() async throws {
        try await withRelay { relay in
            let (app, inbox) = try await relay.connectCollecting("p2o/clients/u/+")
            try await Buttons.send(app, "u", "register", "door")
            try await inbox.messages(on: "p2o/clients/u/register-response")
            try await Buttons.send(app, "u", "unregister", "door")
            try await Buttons.send(app, "u", "unregister", "door")
            let answers = try await inbox.messages(on: "p2o/clients/u/unregister-response", count: 2)
            #expect(
                answers.map(\.text) == [
                    #"{"status":"success"}"#, #"{"error":"u is not registered for button door","status":"failed"}"#
                ])
            #expect(try await relay.store.client(id: "u")?.registrations == [])
        }
    }
}
