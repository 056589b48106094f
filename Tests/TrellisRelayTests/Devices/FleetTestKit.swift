import Foundation
import Testing
import TrellisCore
import TrellisMQTT
import TrellisRelay
import TrellisTestSupport

/// An operator's view of the fleet for the tests: one client subscribed to every fleet topic,
/// sending JSON requests and waiting for their replies.
struct FleetConsole: JSONConsole {
    let client: MQTTClient
    let inbox: MessageCollector

    static func open(_ relay: RelayHarness) async throws -> FleetConsole {
        let (client, inbox) = try await relay.connectCollecting(
            "trellis/response/#", "trellis/clients/+/response/#", "devices/+/info", "devices/+/command",
            "trellis/logs/+", "trellis/models/+/info", "trellis/deadletter", "replies/#")
        return FleetConsole(client: client, inbox: inbox)
    }

    /// Sends `payload` to `topic` and returns the next reply on `replyTopic` as text.
    func send(
        _ topic: String, _ payload: [UInt8], replyOn replyTopic: String,
        properties: MQTTProperties = MQTTProperties()
    ) async throws -> MQTTMessage {
        let before = await inbox.received(on: replyTopic).count
        try await client.publishAndWait(topic: topic, payload: payload, properties: properties)
        return try await inbox.messages(on: replyTopic, count: before + 1, timeout: .seconds(20))[before]
    }

    func reply(to service: String, _ action: String, _ json: String, client: String?) async throws -> String {
        let topics = JSONTopics(prefix: "trellis")
        let reply = try await send(
            topics.request(service: service, action: action, client: client), Array(json.utf8),
            replyOn: topics.response(service: service, action: action, client: client))
        return reply.text ?? ""
    }

    /// Connects the simulated device `id` and waits until its retained info, online, is on
    /// `devices/<id>/info`: a device registered with the fleet, for the tests of what comes after.
    func connectOnline(_ relay: RelayHarness, id: String) async throws -> FleetDevice {
        let device = try await FleetDevice.connect(relay, id: id)
        try await waitFor("devices/\(id)/info", deviceInfo(id, powerstate: .online))
        return device
    }

    /// Waits until the latest message on `topic` is `text`.
    func waitFor(_ topic: String, _ text: String) async throws {
        try await inbox.wait(timeout: .seconds(20), "\(topic) = \(text)") { messages in
            messages.last { $0.topic == topic }?.text == text
        }
    }

    /// Waits until `topic` carried a message matching `predicate`.
    func waitFor(_ topic: String, where predicate: @escaping @Sendable (String) -> Bool) async throws {
        try await inbox.wait(timeout: .seconds(20), "a message on \(topic)") { messages in
            messages.contains { $0.topic == topic && predicate($0.text ?? "") }
        }
    }
}

/// A simulated device: its own client with `offline` as its retained will.
struct FleetDevice {
    let id: String
    let client: MQTTClient
    let inbox: MessageCollector

    static func connect(_ relay: RelayHarness, id: String) async throws -> FleetDevice {
        let client = try await relay.connect(id: "device-\(id)") { configuration in
            configuration.will = MQTTWill(
                topic: "devices/\(id)/status", payload: Array("offline".utf8), qos: .atLeastOnce, retain: true)
        }
        let inbox = try await MessageCollector.collecting(client, subscribedTo: ["devices/\(id)/command"])
        try await client.publishAndWait(topic: "devices/\(id)/status", payload: Array("online".utf8), retain: true)
        return FleetDevice(id: id, client: client, inbox: inbox)
    }

    func publish(_ leaf: String, _ text: String) async throws {
        try await client.publishAndWait(topic: "devices/\(id)/\(leaf)", payload: Array(text.utf8))
    }
}

extension RelaySettings {
    /// Default settings with `names` as the operators: the clients allowed fleet changes and
    /// operator requests in the per-client form.
    static func operators(_ names: Set<String>) -> RelaySettings {
        var settings = RelaySettings()
        settings.operators = names
        return settings
    }
}

/// The retained info of a device with the given members (the rest `null`, offline).
func deviceInfo(
    _ id: String, name: String? = nil, powerstate: Powerstate = .offline, rssi: Int? = nil,
    agentID: String? = nil, modelID: String? = nil
) -> String {
    String(
        decoding: DevicePayloads.info(
            DeviceRecord(
                id: id, name: name, powerstate: powerstate, rssi: rssi,
                agentID: agentID, modelID: modelID)), as: UTF8.self)
}

extension EngineRecorder {
    /// Device `id` says it is online, as its first message after connecting does.
    func online(_ id: String) async {
        await send("online", on: "devices/\(id)/status")
    }
}
