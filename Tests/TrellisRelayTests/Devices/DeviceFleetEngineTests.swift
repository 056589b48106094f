import Foundation
import Testing
import TrellisCore
import TrellisMQTTTypes
import TrellisRelay
import TrellisStore
import TrellisTestSupport

/// The device fleet's logic on the engine over SQLite and PostgreSQL: presence, telemetry, logs,
/// models, builds and commands, the JSON envelope's refusals, and a restart. What needs a broker
/// (a device's will, retained delivery to a late subscriber) is in ``DeviceFleetTests``.
@Suite("Devices: fleet on the engine")
struct DeviceFleetEngineTests {
    @Test(
        "a device is online with a retained info record; rssi from telemetry; offline again with a Status log entry",
        arguments: StoreKind.bothStores)
    func presence(kind: StoreKind) async throws {
        try await withRecorder(kind) { fleet async throws in
            await fleet.online("node7")
            #expect(fleet.latest(on: "devices/node7/info") == deviceInfo("node7", powerstate: .online))
            #expect(fleet.messages(on: "devices/node7/info").allSatisfy { $0.retain && $0.qos == .atLeastOnce })
            await fleet.send(#"{"rssi":-61,"agent_id":"a7"}"#, on: "devices/node7/telemetry")
            let online = deviceInfo("node7", powerstate: .online, rssi: -61, agentID: "a7")
            #expect(fleet.latest(on: "devices/node7/info") == online)
            #expect(try await fleet.data("devices", "list") == "{\"devices\":[\(online)]}")
            #expect(try await fleet.data("devices", "list", #"{"powerstate":"offline"}"#) == #"{"devices":[]}"#)

            await fleet.online("door")
            await fleet.send("offline", on: "devices/door/status")
            #expect(fleet.latest(on: "devices/door/info") == deviceInfo("door"))
            #expect(
                fleet.texts(on: "trellis/logs/door").contains {
                    $0.contains(#""message":"offline""#) && $0.contains(#""type":"Status""#)
                })
            let entries = try await fleet.data("logs", "get", #"{"device":"door"}"#)
            #expect(entries.contains(#""message":"online""#) && entries.contains(#""message":"offline""#))
        }
    }

    @Test(
        "rename, not_editable, models: create, assign, upload → the online device gets code; model restart",
        arguments: StoreKind.bothStores)
    func modelsAndCommands(kind: StoreKind) async throws {
        try await withRecorder(kind) { fleet async throws in
            for device in ["a", "b"] { await fleet.online(device) }
            #expect(
                try await fleet.data("devices", "update", #"{"id":"a","name":"Kitchen"}"#)
                    == deviceInfo("a", name: "Kitchen", powerstate: .online))
            #expect(fleet.latest(on: "devices/a/info") == deviceInfo("a", name: "Kitchen", powerstate: .online))
            #expect(fleet.texts(on: "trellis/logs/a").contains { $0.contains("renamed to Kitchen") })
            #expect(
                try await fleet.errorCode("devices", "update", #"{"id":"a","powerstate":"offline"}"#) == "not_editable")
            #expect(try await fleet.errorCode("devices", "update", #"{"id":"ghost","name":"x"}"#) == "not_found")

            #expect(
                try await fleet.data("models", "create", #"{"name":"Node"}"#)
                    == #"{"devices":[],"id":"m1","latest_build":null,"name":"Node"}"#)
            #expect(try await fleet.errorCode("models", "create", #"{"name":"Node"}"#) == "conflict")
            _ = try await fleet.data("models", "assign", #"{"device":"a","model":"m1"}"#)
            _ = try await fleet.data("devices", "update", #"{"id":"b","model_id":"m1"}"#)
            #expect(
                fleet.latest(on: "trellis/models/m1/info")
                    == #"{"devices":["a","b"],"id":"m1","latest_build":null,"name":"Node"}"#)
            #expect(fleet.messages(on: "devices/a/command").isEmpty)

            #expect(
                try await fleet.data(
                    "models", "upload", #"{"model":"m1","device_code":"dev();","agent_code":"agent();"}"#)
                    == #"{"build":1}"#)
            for device in ["a", "b"] {
                let command = fleet.messages(on: "devices/\(device)/command")
                #expect(command.count == 1)
                #expect(command.first?.payload == Array(#"{"build":1,"model":"m1","op":"code"}"#.utf8))
                #expect(command.first?.qos == PublishQoS.delivered && command.first?.retain == false)
            }
            #expect(
                fleet.latest(on: "trellis/models/m1/info")
                    == #"{"devices":["a","b"],"id":"m1","latest_build":1,"name":"Node"}"#)
            let code = try await fleet.data("models", "code", #"{"model":"m1"}"#)
            #expect(
                code.contains(#""agent_code":"agent();","build":1"#)
                    && code.contains(#""device_code":"dev();","model":"m1""#))
            #expect(try await fleet.errorCode("models", "code", #"{"model":"m1","build":2}"#) == "not_found")
            #expect(
                try await fleet.data("models", "builds", #"{"model":"m1"}"#).hasPrefix(
                    #"{"builds":[{"build":1,"created_at":"#))

            // Assigned to a model with a build: the new device gets the code at once.
            await fleet.online("c")
            _ = try await fleet.data("models", "assign", #"{"device":"c","model":"m1"}"#)
            #expect(fleet.texts(on: "devices/c/command") == [#"{"build":1,"model":"m1","op":"code"}"#])

            #expect(try await fleet.data("models", "restart", #"{"id":"m1"}"#) == #"{"restarted":["a","b","c"]}"#)
            for device in ["a", "b", "c"] {
                #expect(fleet.texts(on: "devices/\(device)/command").last == #"{"op":"restart"}"#)
            }
            #expect(fleet.texts(on: "trellis/logs/c").contains { $0.contains("restart sent") })
            #expect(try await fleet.data("devices", "restart", #"{"id":"a"}"#) == #"{"restarted":["a"]}"#)
            #expect(
                try await fleet.data("devices", "list", #"{"model_id":"m1"}"#).components(separatedBy: "\"id\"").count
                    == 4)

            #expect(
                try await fleet.data("models", "delete", #"{"id":"m1"}"#)
                    == #"{"deleted":"m1","unassigned":["a","b","c"]}"#)
            #expect(fleet.latest(on: "devices/a/info") == deviceInfo("a", name: "Kitchen", powerstate: .online))
        }
    }

    @Test(
        "250 log lines keep the newest 200; since filters; delete clears the retained info",
        arguments: StoreKind.bothStores)
    func logsAndDelete(kind: StoreKind) async throws {
        try await withRecorder(kind) { fleet async throws in
            for index in 1...250 {
                let second = String(format: "%02d", index % 60)
                let minute = String(format: "%02d", index / 60)
                await fleet.send(
                    #"{"type":"Device","message":"line \#(index)","timestamp":"2026-11-22T10:\#(minute):\#(second)Z"}"#,
                    on: "devices/chatty/log")
            }
            await fleet.send("plain text\n", on: "devices/chatty/log")
            #expect(fleet.latest(on: "trellis/logs/chatty")?.contains("plain text") == true)
            let all = try await fleet.data("logs", "get", #"{"device":"chatty"}"#)
            let messages = all.components(separatedBy: #""message":""#).dropFirst().map { $0.prefix { $0 != "\"" } }
            #expect(messages.count == 200)
            #expect(messages.first == "line 52")
            #expect(messages.last == "plain text")
            // 10:04:00 is line 240.
            let since = try await fleet.data(
                "logs", "get", #"{"device":"chatty","since":"2026-11-22T10:04:00Z","limit":200}"#)
            #expect(since.components(separatedBy: "\"message\"").count - 1 == 12)
            #expect(try await fleet.data("logs", "get", #"{"device":"chatty","since":1795341840}"#) == since)

            #expect(fleet.latest(on: "devices/chatty/info") == deviceInfo("chatty"))
            #expect(try await fleet.data("devices", "delete", #"{"id":"chatty"}"#) == #"{"deleted":"chatty"}"#)
            let cleared = try #require(fleet.messages(on: "devices/chatty/info").last)
            #expect(cleared.payload.isEmpty && cleared.retain)
            #expect(try await fleet.errorCode("logs", "get", #"{"device":"chatty"}"#) == "not_found")
        }
    }

    @Test("the registry, models, builds and logs survive a restart of Trellis", arguments: StoreKind.bothStores)
    func survivesRestart(kind: StoreKind) async throws {
        try await withStorePlace(kind) { open in
            let logBefore = try await closing(try await open()) { store async throws in
                let fleet = EngineRecorder(EngineHarness(store: store))
                await fleet.online("keep")
                _ = try await fleet.data("models", "create", #"{"name":"Node"}"#)
                _ = try await fleet.data("models", "assign", #"{"device":"keep","model":"m1"}"#)
                _ = try await fleet.data("models", "upload", #"{"model":"m1","device_code":"d","agent_code":"a"}"#)
                let log = try await fleet.data("logs", "get", #"{"device":"keep"}"#)
                try await store.flush()
                return log
            }
            try await closing(try await open()) { store async throws in
                let fleet = EngineRecorder(EngineHarness(store: store))
                #expect(
                    try await fleet.data("devices", "get", #"{"id":"keep"}"#)
                        == deviceInfo("keep", powerstate: .online, modelID: "m1"))
                #expect(
                    try await fleet.data("models", "get", #"{"id":"m1"}"#)
                        == #"{"devices":["keep"],"id":"m1","latest_build":1,"name":"Node"}"#)
                #expect(try await fleet.data("logs", "get", #"{"device":"keep"}"#) == logBefore)
                #expect(try await fleet.data("models", "create", #"{"name":"Hub"}"#).contains(#""id":"m2""#))
            }
        }
    }

    @Test(
        "bad JSON, unknown actions, bad ids and 2 MiB code get their codes; bad device topics are dead-lettered",
        arguments: StoreKind.bothStores)
    func refusals(kind: StoreKind) async throws {
        try await withRecorder(kind) { fleet async throws in
            let bad = await fleet.send([0xFF, 0x00], on: "trellis/request/devices/list")
            #expect(
                bad.first { $0.topic == "trellis/response/devices/list" }?.payload
                    == Array(
                        #"{"code":"invalid_json","error":"the payload is not valid UTF-8 text","status":"error"}"#.utf8)
            )
            let letter = try #require(fleet.latest(on: "trellis/deadletter"))
            #expect(letter.contains(#""reason":"invalid_json""#))
            #expect(letter.contains(#""topic":"trellis/request/devices/list""#))
            #expect(try await fleet.errorCode("devices", "list", "{nope") == "invalid_json")
            #expect(
                try await fleet.request("devices", "reboot", #"{"transaction":"t9"}"#)
                    == #"{"code":"unknown_action","error":"devices has no action \"reboot\"; its actions are list, get, update, delete, restart","status":"error","transaction":"t9"}"#
            )
            #expect(try await fleet.errorCode("models", "frob", "{}", client: "alice") == "unknown_action")
            #expect(
                try await fleet.request("devices", "get", #"{"id":"bad id!","transaction":5}"#)
                    == #"{"code":"invalid_request","error":"the member \"id\" must be a device id: 1 to 64 characters of A-Z, a-z, 0-9, '.', '_' or '-'","status":"error","transaction":5}"#
            )
            #expect(try await fleet.errorCode("devices", "get", #"{"id":"nobody"}"#) == "not_found")
            #expect(try await fleet.errorCode("models", "get", #"{"id":"m404"}"#) == "not_found")
            _ = try await fleet.data("models", "create", #"{"name":"Big"}"#)
            let twoMiB = String(repeating: "x", count: 2 * 1_048_576)
            #expect(
                try await fleet.errorCode(
                    "models", "upload", #"{"model":"m1","device_code":"\#(twoMiB)","agent_code":""}"#) == "too_large")
            #expect(try await fleet.data("models", "builds", #"{"model":"m1"}"#) == #"{"builds":[],"model":"m1"}"#)

            for (topic, payload, reason) in [
                ("devices/bad!id/status", "online", "invalid_device_id"),
                ("devices/ok/status", "asleep", "invalid_status"),
                ("devices/ok/telemetry", #"{"rssi":"loud"}"#, "invalid_rssi"),
                ("devices/ok/log", "{nope", "invalid_json")
            ] {
                let before = fleet.texts(on: "trellis/deadletter").count
                await fleet.send(payload, on: topic)
                let letters = fleet.texts(on: "trellis/deadletter").dropFirst(before)
                #expect(letters.count == 1, "\(topic)")
                #expect(
                    letters.allSatisfy { $0.contains(#""reason":"\#(reason)""#) && $0.contains(topic) }, "\(letters)")
            }
            #expect(try await fleet.errorCode("devices", "get", #"{"id":"ok"}"#) == "not_found")
        }
    }

    @Test("per-client form: reads for anyone, fleet changes only for operators", arguments: StoreKind.bothStores)
    func forbidden(kind: StoreKind) async throws {
        try await withRecorder(kind, settings: .operators(["ops"])) { fleet async throws in
            #expect(try await fleet.data("models", "create", #"{"name":"Node"}"#).contains("m1"))
            #expect(try await fleet.errorCode("models", "create", #"{"name":"Other"}"#, client: "alice") == "forbidden")
            #expect(try await fleet.errorCode("devices", "restart", #"{"id":"x"}"#, client: "alice") == "forbidden")
            #expect(
                try await fleet.request("models", "list", "", client: "alice").hasPrefix(
                    #"{"data":{"models":[{"devices":[],"id":"m1""#))
            #expect(
                try await fleet.request("models", "create", #"{"name":"Ops"}"#, client: "ops").contains(#""id":"m2""#))
        }
    }

    @Test(
        "a v5 Response Topic gets the reply with its Correlation Data, as mosquitto_rr expects; the shared topic too",
        arguments: StoreKind.bothStores)
    func responseTopic(kind: StoreKind) async throws {
        try await withRecorder(kind) { fleet async throws in
            let properties = MQTTProperties(
                responseTopic: "trellis/response/models/list/rr", correlationData: Array("corr-1".utf8))
            let out = await fleet.send([], on: "trellis/request/models/list", properties: properties)
            let reply = try #require(out.first { $0.topic == "trellis/response/models/list/rr" })
            #expect(reply.payload == Array(#"{"data":{"models":[]},"status":"ok"}"#.utf8))
            #expect(reply.properties.correlationData == Array("corr-1".utf8))
            #expect(out.contains { $0.topic == "trellis/response/models/list" })
        }
    }
}
