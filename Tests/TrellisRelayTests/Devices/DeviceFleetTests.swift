import Foundation
import Testing
import TrellisCore
import TrellisMQTT
import TrellisRelay
import TrellisStore
import TrellisTestSupport

/// The device fleet through a real broker: presence, telemetry, logs, models, builds and
/// commands, the JSON envelope's refusals, and durability.
@Suite("Devices: fleet through the broker", .serialized)
struct DeviceFleetTests {
    @Test("a device appears with retained info when it comes online; rssi from telemetry")
    func presenceAndTelemetry() async throws {
        try await withRelay { relay in
            let console = try await FleetConsole.open(relay)
            let node = try await FleetDevice.connect(relay, id: "node7")
            try await console.waitFor("devices/node7/info", deviceInfo("node7", powerstate: .online))
            try await node.publish("telemetry", #"{"rssi":-61,"agent_id":"a7"}"#)
            try await console.waitFor(
                "devices/node7/info", deviceInfo("node7", powerstate: .online, rssi: -61, agentID: "a7"))

            // A late subscriber gets the retained record.
            let (_, lateInbox) = try await relay.connectCollecting("devices/+/info")
            let retained = try await lateInbox.messages(on: "devices/node7/info")
            #expect(
                retained[0].retain
                    && retained[0].text == deviceInfo("node7", powerstate: .online, rssi: -61, agentID: "a7"))

            #expect(
                try await console.data("devices", "list")
                    == "{\"devices\":[\(deviceInfo("node7", powerstate: .online, rssi: -61, agentID: "a7"))]}")
            #expect(try await console.data("devices", "list", #"{"powerstate":"offline"}"#) == #"{"devices":[]}"#)
        }
    }

    @Test("a device killed: its will makes it offline and a Status entry streams on trellis/logs/<id>")
    func willMakesOffline() async throws {
        try await withRelay { relay in
            let console = try await FleetConsole.open(relay)
            let node = try await console.connectOnline(relay, id: "door")
            node.client.dropConnectionUncleanly()
            try await console.waitFor("devices/door/info", deviceInfo("door"))
            try await console.waitFor("trellis/logs/door") {
                $0.contains(#""message":"offline""#) && $0.contains(#""type":"Status""#)
            }
            let entries = try await console.data("logs", "get", #"{"device":"door"}"#)
            #expect(entries.contains(#""message":"online""#) && entries.contains(#""message":"offline""#))
        }
    }

    @Test("rename, not_editable, models: create, assign, upload → the online device gets code; model restart")
    func modelsAndCommands() async throws {
        try await withRelay { relay in
            let console = try await FleetConsole.open(relay)
            let a = try await FleetDevice.connect(relay, id: "a")
            let b = try await FleetDevice.connect(relay, id: "b")
            try await console.waitFor("devices/b/info", deviceInfo("b", powerstate: .online))

            #expect(
                try await console.data("devices", "update", #"{"id":"a","name":"Kitchen"}"#)
                    == deviceInfo("a", name: "Kitchen", powerstate: .online))
            try await console.waitFor("devices/a/info", deviceInfo("a", name: "Kitchen", powerstate: .online))
            try await console.waitFor("trellis/logs/a") { $0.contains("renamed to Kitchen") }
            #expect(
                try await console.errorCode("devices", "update", #"{"id":"a","powerstate":"offline"}"#)
                    == "not_editable")
            #expect(try await console.errorCode("devices", "update", #"{"id":"ghost","name":"x"}"#) == "not_found")

            #expect(
                try await console.data("models", "create", #"{"name":"Node"}"#)
                    == #"{"devices":[],"id":"m1","latest_build":null,"name":"Node"}"#)
            #expect(try await console.errorCode("models", "create", #"{"name":"Node"}"#) == "conflict")
            _ = try await console.data("models", "assign", #"{"device":"a","model":"m1"}"#)
            _ = try await console.data("devices", "update", #"{"id":"b","model_id":"m1"}"#)
            try await console.waitFor(
                "trellis/models/m1/info", #"{"devices":["a","b"],"id":"m1","latest_build":null,"name":"Node"}"#)
            #expect(await a.inbox.received(on: "devices/a/command").isEmpty)

            #expect(
                try await console.data(
                    "models", "upload", #"{"model":"m1","device_code":"dev();","agent_code":"agent();"}"#)
                    == #"{"build":1}"#)
            for device in [a, b] {
                let command = try await device.inbox.messages(on: "devices/\(device.id)/command")
                #expect(command[0].text == #"{"build":1,"model":"m1","op":"code"}"#)
                #expect(command[0].qos == .atLeastOnce && !command[0].retain)
            }
            try await console.waitFor(
                "trellis/models/m1/info", #"{"devices":["a","b"],"id":"m1","latest_build":1,"name":"Node"}"#)
            let code = try await console.data("models", "code", #"{"model":"m1"}"#)
            #expect(
                code.contains(#""agent_code":"agent();","build":1"#)
                    && code.contains(#""device_code":"dev();","model":"m1""#))
            #expect(try await console.errorCode("models", "code", #"{"model":"m1","build":2}"#) == "not_found")
            #expect(
                try await console.data("models", "builds", #"{"model":"m1"}"#).hasPrefix(
                    #"{"builds":[{"build":1,"created_at":"#))

            // Assigned to a model with a build: the new device gets the code at once.
            let c = try await console.connectOnline(relay, id: "c")
            _ = try await console.data("models", "assign", #"{"device":"c","model":"m1"}"#)
            #expect(
                try await c.inbox.messages(on: "devices/c/command")[0].text == #"{"build":1,"model":"m1","op":"code"}"#)

            #expect(try await console.data("models", "restart", #"{"id":"m1"}"#) == #"{"restarted":["a","b","c"]}"#)
            for device in [a, b, c] {
                try await device.inbox.wait(timeout: .seconds(20), "restart") { messages in
                    messages.contains { $0.text == #"{"op":"restart"}"# }
                }
            }
            try await console.waitFor("trellis/logs/c") { $0.contains("restart sent") }
            #expect(try await console.data("devices", "restart", #"{"id":"a"}"#) == #"{"restarted":["a"]}"#)
            #expect(
                try await console.data("devices", "list", #"{"model_id":"m1"}"#).components(separatedBy: "\"id\"").count
                    == 4)

            #expect(
                try await console.data("models", "delete", #"{"id":"m1"}"#)
                    == #"{"deleted":"m1","unassigned":["a","b","c"]}"#)
            try await console.waitFor("devices/a/info", deviceInfo("a", name: "Kitchen", powerstate: .online))
        }
    }

    @Test("250 log lines keep the newest 200; since filters; delete clears the retained info")
    func logsAndDelete() async throws {
        try await withRelay { relay in
            let console = try await FleetConsole.open(relay)
            let sender = try await relay.connect()
            for index in 1...250 {
                let second = String(format: "%02d", index % 60)
                let minute = String(format: "%02d", index / 60)
                try await sender.publishAndWait(
                    topic: "devices/chatty/log",
                    payload: Array(
                        #"{"type":"Device","message":"line \#(index)","timestamp":"2026-11-22T10:\#(minute):\#(second)Z"}"#
                            .utf8))
            }
            try await sender.publishAndWait(topic: "devices/chatty/log", payload: Array("plain text\n".utf8))
            try await console.waitFor("trellis/logs/chatty") { $0.contains("plain text") }
            let all = try await console.data("logs", "get", #"{"device":"chatty"}"#)
            let messages = all.components(separatedBy: #""message":""#).dropFirst().map { $0.prefix { $0 != "\"" } }
            #expect(messages.count == 200)
            #expect(messages.first == "line 52")
            #expect(messages.last == "plain text")
            // 10:04:00 is line 240.
            let since = try await console.data(
                "logs", "get", #"{"device":"chatty","since":"2026-11-22T10:04:00Z","limit":200}"#)
            #expect(since.components(separatedBy: "\"message\"").count - 1 == 12)
            let seconds = try await console.data("logs", "get", #"{"device":"chatty","since":1795341840}"#)
            #expect(seconds == since)

            try await console.waitFor("devices/chatty/info", deviceInfo("chatty"))
            #expect(try await console.data("devices", "delete", #"{"id":"chatty"}"#) == #"{"deleted":"chatty"}"#)
            try await console.waitFor("devices/chatty/info", "")
            let (_, lateInbox) = try await relay.connectCollecting("devices/+/info", "trellis/status")
            try await lateInbox.messages(on: "trellis/status")
            #expect(await lateInbox.received(on: "devices/chatty/info").isEmpty)
            #expect(try await console.errorCode("logs", "get", #"{"device":"chatty"}"#) == "not_found")
        }
    }

    @Test("the registry, models, builds and logs survive a restart of Trellis")
    func survivesRestart() async throws {
        try await withRelay { relay in
            var console = try await FleetConsole.open(relay)
            _ = try await console.connectOnline(relay, id: "keep")
            _ = try await console.data("models", "create", #"{"name":"Node"}"#)
            _ = try await console.data("models", "assign", #"{"device":"keep","model":"m1"}"#)
            _ = try await console.data("models", "upload", #"{"model":"m1","device_code":"d","agent_code":"a"}"#)
            let logBefore = try await console.data("logs", "get", #"{"device":"keep"}"#)

            try await relay.stopRelay()
            try await relay.startRelay()
            console = try await FleetConsole.open(relay)
            #expect(
                try await console.data("devices", "get", #"{"id":"keep"}"#)
                    == deviceInfo("keep", powerstate: .online, modelID: "m1"))
            #expect(
                try await console.data("models", "get", #"{"id":"m1"}"#)
                    == #"{"devices":["keep"],"id":"m1","latest_build":1,"name":"Node"}"#)
            #expect(try await console.data("logs", "get", #"{"device":"keep"}"#) == logBefore)
            #expect(try await console.data("models", "create", #"{"name":"Hub"}"#).contains(#""id":"m2""#))
        }
    }

    @Test("bad JSON, unknown actions, bad ids and 2 MiB code get their codes; bad device topics are dead-lettered")
    func refusals() async throws {
        try await withRelay { relay in
            let console = try await FleetConsole.open(relay)
            let bad = try await console.send(
                "trellis/request/devices/list", [0xFF, 0x00], replyOn: "trellis/response/devices/list")
            #expect(
                bad.text == #"{"code":"invalid_json","error":"the payload is not valid UTF-8 text","status":"error"}"#)
            let letter = try await console.inbox.messages(on: "trellis/deadletter")[0]
            #expect(letter.text?.contains(#""reason":"invalid_json""#) == true)
            #expect(letter.text?.contains(#""topic":"trellis/request/devices/list""#) == true)
            #expect(try await console.errorCode("devices", "list", "{nope") == "invalid_json")
            #expect(
                try await console.request("devices", "reboot", #"{"transaction":"t9"}"#)
                    == #"{"code":"unknown_action","error":"devices has no action \"reboot\"; its actions are list, get, update, delete, restart","status":"error","transaction":"t9"}"#
            )
            #expect(try await console.errorCode("models", "frob", "{}", client: "alice") == "unknown_action")
            #expect(
                try await console.request("devices", "get", #"{"id":"bad id!","transaction":5}"#)
                    == #"{"code":"invalid_request","error":"the member \"id\" must be a device id: 1 to 64 characters of A-Z, a-z, 0-9, '.', '_' or '-'","status":"error","transaction":5}"#
            )
            #expect(try await console.errorCode("devices", "get", #"{"id":"nobody"}"#) == "not_found")
            #expect(try await console.errorCode("models", "get", #"{"id":"m404"}"#) == "not_found")
            _ = try await console.data("models", "create", #"{"name":"Big"}"#)
            let twoMiB = String(repeating: "x", count: 2 * 1_048_576)
            #expect(
                try await console.errorCode(
                    "models", "upload", #"{"model":"m1","device_code":"\#(twoMiB)","agent_code":""}"#) == "too_large")
            #expect(try await console.data("models", "builds", #"{"model":"m1"}"#) == #"{"builds":[],"model":"m1"}"#)

            let sender = try await relay.connect()
            for (topic, payload, reason) in [
                ("devices/bad!id/status", "online", "invalid_device_id"),
                ("devices/ok/status", "asleep", "invalid_status"),
                ("devices/ok/telemetry", #"{"rssi":"loud"}"#, "invalid_rssi"),
                ("devices/ok/log", "{nope", "invalid_json")
            ] {
                try await sender.publishAndWait(topic: topic, payload: Array(payload.utf8))
                try await console.waitFor("trellis/deadletter") {
                    $0.contains(#""reason":"\#(reason)""#) && $0.contains(topic)
                }
            }
            #expect(try await console.errorCode("devices", "get", #"{"id":"ok"}"#) == "not_found")
        }
    }

    @Test("per-client form: reads for anyone, fleet changes only for operators")
    func forbidden() async throws {
        try await withRelay(settings: .operators(["ops"])) { relay in
            let console = try await FleetConsole.open(relay)
            #expect(try await console.data("models", "create", #"{"name":"Node"}"#).contains("m1"))
            #expect(
                try await console.errorCode("models", "create", #"{"name":"Other"}"#, client: "alice") == "forbidden")
            #expect(try await console.errorCode("devices", "restart", #"{"id":"x"}"#, client: "alice") == "forbidden")
            #expect(
                try await console.request("models", "list", "", client: "alice").hasPrefix(
                    #"{"data":{"models":[{"devices":[],"id":"m1""#))
            #expect(
                try await console.request("models", "create", #"{"name":"Ops"}"#, client: "ops").contains(#""id":"m2""#)
            )
        }
    }

    @Test("a v5 Response Topic gets the reply with its Correlation Data, as mosquitto_rr expects")
    func responseTopic() async throws {
        try await withRelay { relay in
            let console = try await FleetConsole.open(relay)
            let properties = MQTTProperties(
                responseTopic: "trellis/response/models/list/rr", correlationData: Array("corr-1".utf8))
            let reply = try await console.send(
                "trellis/request/models/list", [], replyOn: "trellis/response/models/list/rr", properties: properties)
            #expect(reply.text == #"{"data":{"models":[]},"status":"ok"}"#)
            #expect(reply.properties.correlationData == Array("corr-1".utf8))
            // The shared reply topic gets it too.
            try await console.inbox.messages(on: "trellis/response/models/list")
        }
    }
}
