import Foundation
import Testing
import TrellisCore
import TrellisMQTT
import TrellisRelay
import TrellisStore
import TrellisTestSupport

/// `status` → `connection-response`, `register` → `register-response`, `unregister` →
/// `unregister-response`, on the engine over SQLite and PostgreSQL.
@Suite("Buttons: connection and registration")
struct ButtonConnectionTests {
    static let long = String(repeating: "c", count: 65)
    static let tooLong = #"{"error":"the client id has 65 characters; at most 64 are allowed","status":"failed"}"#

    @Test(
        "online is answered with success; an invalid client id gets failed with an error",
        arguments: StoreKind.bothStores)
    func connectionResponse(kind: StoreKind) async throws {
        try await withRecorder(kind) { relay async throws in
            await relay.send(client: "phone", "status", "online")
            #expect(relay.texts(on: "p2o/clients/phone/connection-response") == [#"{"status":"success"}"#])
            #expect(
                try await relay.store.client(id: "phone") == ClientRecord(id: "phone", online: true, registrations: []))

            await relay.send(client: Self.long, "status", "online")
            #expect(relay.texts(on: "p2o/clients/\(Self.long)/connection-response") == [Self.tooLong])
            #expect(try await relay.store.client(id: Self.long) == nil)

            let sixtyFour = String(repeating: "c", count: 64)
            await relay.send(client: sixtyFour, "status", "online")
            #expect(relay.texts(on: "p2o/clients/\(sixtyFour)/connection-response") == [#"{"status":"success"}"#])

            await relay.send(client: "küche", "status", "online")
            #expect(relay.texts(on: "p2o/clients/küche/connection-response") == [#"{"status":"success"}"#])
        }
    }

    @Test("offline is not answered; it is stored", arguments: StoreKind.bothStores)
    func offlineIsSilent(kind: StoreKind) async throws {
        try await withRecorder(kind) { relay async throws in
            #expect(await relay.send(client: "quiet", "status", "offline").isEmpty)
            #expect(
                await relay.send(client: "loud", "status", "online").map(\.topic) == [
                    "p2o/clients/loud/connection-response"
                ])
            #expect(try await relay.store.client(id: "quiet")?.online == false)
        }
    }

    @Test(
        "register before any press of the button has no button member; a second client too",
        arguments: StoreKind.bothStores)
    func registerBeforeAnyPress(kind: StoreKind) async throws {
        try await withRecorder(kind) { relay async throws in
            await relay.register("a", for: "door")
            await relay.send(client: "b", "register", "door\n")
            #expect(relay.texts(on: "p2o/clients/a/register-response") == [#"{"status":"success"}"#])
            #expect(relay.texts(on: "p2o/clients/b/register-response") == [#"{"status":"success"}"#])
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
        ].flatMap { registration in StoreKind.bothStores.map { (registration, $0) } })
    func invalidRegistration(
        registration: (client: String, button: String, answer: String), kind: StoreKind
    ) async throws {
        let (client, button, answer) = registration
        try await withRecorder(kind) { relay async throws in
            await relay.send(client: client, "register", button)
            #expect(relay.texts(on: "p2o/clients/\(client)/register-response") == [answer])
            let letters = relay.messages(on: "trellis/deadletter")
            #expect(letters.count == 1)
            #expect(
                try Buttons.letter(try #require(letters.first))
                    == ["payload": button, "reason": "invalid_registration", "topic": "p2o/clients/\(client)/register"])
            #expect(try await relay.store.client(id: client) == nil)
        }
    }

    @Test("a registration payload that is not UTF-8 gets failed", arguments: StoreKind.bothStores)
    func registrationNotUTF8(kind: StoreKind) async throws {
        try await withRecorder(kind) { relay async throws in
            await relay.send([0x64, 0xff], on: "p2o/clients/x/register")
            #expect(
                relay.texts(on: "p2o/clients/x/register-response")
                    == [#"{"error":"the button id is not valid UTF-8 text","status":"failed"}"#])
        }
    }

    @Test("unregister answers success once, then failed", arguments: StoreKind.bothStores)
    func unregister(kind: StoreKind) async throws {
        try await withRecorder(kind) { relay async throws in
            await relay.send(client: "u", "register", "door")
            #expect(relay.messages(on: "p2o/clients/u/register-response").count == 1)
            await relay.send(client: "u", "unregister", "door")
            await relay.send(client: "u", "unregister", "door")
            #expect(
                relay.texts(on: "p2o/clients/u/unregister-response") == [
                    #"{"status":"success"}"#, #"{"error":"u is not registered for button door","status":"failed"}"#
                ])
            #expect(try await relay.store.client(id: "u")?.registrations == [])
        }
    }
}
