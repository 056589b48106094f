import Foundation
import Testing
import TrellisCore

@Suite("Devices: ids, records, logs and telemetry")
struct DeviceRulesTests {
    static let now = Date(timeIntervalSince1970: 1_795_344_000)

    @Test(
        "device ids",
        arguments: [
            ("node7", true), ("A-b_c.9", true), (String(repeating: "z", count: 64), true),
            ("", false), (String(repeating: "z", count: 65), false), ("a b", false), ("a/b", false),
            ("a+b", false), ("a#", false), ("küche", false), ("a\n", false)
        ])
    func ids(_ id: String, _ valid: Bool) {
        #expect(DeviceIdentifier.isValid(id) == valid)
    }

    @Test(
        "model ids",
        arguments: [("m1", 1 as Int64?), ("m42", 42), ("m0", nil), ("m01", nil), ("m", nil), ("x1", nil), ("m1a", nil)])
    func modelIDs(_ text: String, _ number: Int64?) {
        #expect(ModelIdentifier.number(text) == number)
        if let number { #expect(ModelIdentifier.text(number) == text) }
    }

    @Test(
        "statuses",
        arguments: [
            ("online", Powerstate.online as Powerstate?), ("offline\n", .offline), (" online ", .online),
            ("ONLINE", nil), ("", nil), ("on", nil)
        ])
    func statuses(_ text: String, _ expected: Powerstate?) {
        #expect(Powerstate(payload: Array(text.utf8)) == expected)
    }

    @Test("a device record shows null for what is unknown and offline without a status")
    func deviceRecord() {
        #expect(
            String(decoding: DevicePayloads.info(DeviceRecord(id: "n1")), as: UTF8.self)
                == #"{"agent_id":null,"agent_status":null,"id":"n1","model_id":null,"name":null,"powerstate":"offline","rssi":null}"#
        )
        let full = DeviceRecord(
            id: "n1", name: "Kitchen", powerstate: .online, rssi: -61, agentID: "a1",
            agentStatus: "online", modelID: "m1")
        #expect(
            String(decoding: DevicePayloads.info(full), as: UTF8.self)
                == #"{"agent_id":"a1","agent_status":"online","id":"n1","model_id":"m1","name":"Kitchen","powerstate":"online","rssi":-61}"#
        )
    }

    @Test("model records, commands and log entries")
    func payloads() {
        #expect(
            String(decoding: DevicePayloads.modelInfo(ModelRecord(id: "m1", name: "Node")), as: UTF8.self)
                == #"{"devices":[],"id":"m1","latest_build":null,"name":"Node"}"#)
        #expect(
            String(
                decoding: DevicePayloads.modelInfo(
                    ModelRecord(id: "m1", name: "Node", devices: ["a", "b"], latestBuild: 3)), as: UTF8.self)
                == #"{"devices":["a","b"],"id":"m1","latest_build":3,"name":"Node"}"#)
        #expect(String(decoding: DevicePayloads.restartCommand(), as: UTF8.self) == #"{"op":"restart"}"#)
        #expect(
            String(decoding: DevicePayloads.codeCommand(model: "m1", build: 2), as: UTF8.self)
                == #"{"build":2,"model":"m1","op":"code"}"#)
        #expect(
            String(decoding: DevicePayloads.logEntry(.status("online", at: Self.now)), as: UTF8.self)
                == #"{"message":"online","timestamp":"2026-11-22T10:40:00.000Z","type":"Status"}"#)
    }

    @Test(
        "log lines",
        arguments: [
            ("booted", DeviceLogEntry(timestamp: now, type: "Device", message: "booted")),
            ("line with a break\r\n", DeviceLogEntry(timestamp: now, type: "Device", message: "line with a break")),
            (#"{"type":"Agent","message":"hi"}"#, DeviceLogEntry(timestamp: now, type: "Agent", message: "hi")),
            (
                #"{"message":"x","timestamp":"2026-11-22T10:41:05.123Z"}"#,
                DeviceLogEntry(timestamp: Date(timeIntervalSince1970: 1_795_344_065.123), type: "Device", message: "x")
            ),
            (
                #"{"message":"x","timestamp":"2026-11-22T11:41:05+01:00","type":null}"#,
                DeviceLogEntry(timestamp: Date(timeIntervalSince1970: 1_795_344_065), type: "Device", message: "x")
            ),
            // Members Trellis does not read may hold anything; null is an absent timestamp.
            (
                #" {"level":[1,{"a":null}],"message":"x","timestamp":null,"n":1e3} "#,
                DeviceLogEntry(timestamp: now, type: "Device", message: "x")
            )
        ])
    func logLines(_ text: String, _ expected: DeviceLogEntry) {
        #expect(DeviceLogEntry.parse(Array(text.utf8), receivedAt: Self.now) == .success(expected))
    }

    static let badLines: [([UInt8], DeviceLogRejection)] = [
        ([0xC3, 0x28], DeviceLogRejection.invalidUTF8),
        (Array("".utf8), .empty),
        (Array("  \n".utf8), .empty),
        (Array("{nope".utf8), .invalidJSON),
        (Array(#"{"type":"Agent"}"#.utf8), .invalidMessage),
        (Array(#"{"message":5}"#.utf8), .invalidMessage),
        (Array(#"{"message":"x","type":""}"#.utf8), .invalidType),
        (Array(#"{"message":"x","timestamp":"noon"}"#.utf8), .invalidTimestamp),
        (Array(#"{"message":"x","timestamp":17}"#.utf8), .invalidTimestamp),
        // One reason per line, in this order: the JSON, then the message, the type, the timestamp.
        (Array(#"{"message":"x","extra":[1,}"#.utf8), .invalidJSON),
        (Array(#"{"message":"x"} trailing"#.utf8), .invalidJSON),
        (Array(#"{"message":null,"type":7,"timestamp":"noon"}"#.utf8), .invalidMessage),
        (Array(#"{"message":"x","type":7,"timestamp":"noon"}"#.utf8), .invalidType),
        (Array(#"{"message":"x","type":"a\u0001b"}"#.utf8), .invalidType),
        (Array(#"{"message":"x","type":"Agent","timestamp":["noon"]}"#.utf8), .invalidTimestamp),
        (Array(repeating: 0x61, count: 64 * 1024 + 1), .tooLarge)
    ]

    @Test("bad log lines are dead-lettered with their reason", arguments: badLines)
    func badLogLines(_ payload: [UInt8], _ reason: DeviceLogRejection) {
        #expect(DeviceLogEntry.parse(payload, receivedAt: Self.now) == .failure(reason))
    }

    @Test(
        "telemetry",
        arguments: [
            (#"{"rssi":-61}"#, DeviceTelemetry(rssi: .some(-61))),
            (
                #"{"rssi":-61.0,"agent_id":"a1","agent_status":"online","other":[1]}"#,
                DeviceTelemetry(rssi: .some(-61), agentID: .some("a1"), agentStatus: .some("online"))
            ),
            (#"{"rssi":null}"#, DeviceTelemetry(rssi: .some(nil))),
            ("{}", DeviceTelemetry())
        ])
    func telemetry(_ text: String, _ expected: DeviceTelemetry) {
        #expect(DeviceTelemetry.parse(Array(text.utf8)) == .success(expected))
    }

    @Test(
        "bad telemetry",
        arguments: [
            (#"{"rssi":"strong"}"#, DeviceTelemetryRejection.invalidRSSI),
            (#"{"rssi":-61.5}"#, .invalidRSSI),
            (#"{"rssi":5}"#, .invalidRSSI),
            (#"{"agent_id":7}"#, .invalidAgentID),
            (#"{"agent_status":""}"#, .invalidAgentStatus),
            ("[1]", .notAnObject),
            ("rssi=5", .invalidJSON)
        ])
    func badTelemetry(_ text: String, _ reason: DeviceTelemetryRejection) {
        #expect(DeviceTelemetry.parse(Array(text.utf8)) == .failure(reason))
    }

    @Test(
        "since: Unix seconds or ISO 8601",
        arguments: [
            (JSONValue.integer(10), 10.0 as Double?), (.number(1.5), 1.5),
            (.string("2026-11-22T10:40:00Z"), 1_795_344_000),
            (.string("12"), 12), (.null, nil)
        ])
    func since(_ value: JSONValue, _ seconds: Double?) throws {
        #expect(try LogSince.parse(value).get() == seconds.map(Date.init(timeIntervalSince1970:)))
    }
}
