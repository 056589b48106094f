import Foundation
import Logging
import TrellisCore
import TrellisMQTTTypes
import TrellisStore

/// Home Assistant MQTT discovery, driven by what Trellis publishes anyway.
///
/// - When a handler publishes a thing's retained state (`trellis/plants/<id>/state`,
///   `<buttons>/<id>/state`, `devices/<id>/info`), the thing's configs follow
///   (``follow(_:store:ledger:)``), once per run and again only when its name or model changed;
///   the empty retained payload that clears a deleted thing's state clears its configs too.
/// - At every (re)connect and whenever Home Assistant announces itself (`online` on
///   `homeassistant/status`), every config is published again, with each plant's state
///   (``announce(store:ledger:logger:emit:)``). The birth message's handler only asks for it
///   (``HandlerOutput/announcesDiscovery``): the live relay publishes it from a task of its own at
///   the broker's pace, offline replay appends it to the message's output (``announceAll(store:ledger:logger:)``).
/// - Turning discovery off, or moving it to another prefix, clears the configs this run
///   published (``withdrawAll(ledger:)``).
public struct HomeAssistantService: Sendable {
    let settings: RelaySettings
    let discovery: HomeAssistantDiscovery
    /// The retained states that configs follow, spelled with the settings' prefixes once, as
    /// every retained publish is tried against them.
    let buttonStates: ResolvedTopicPattern
    let deviceInfos: ResolvedTopicPattern
    let plantStates: ResolvedTopicPattern

    /// The service of `settings`, nil while discovery is off.
    public init?(settings: RelaySettings) {
        guard let discovery = settings.homeAssistant else { return nil }
        self.settings = settings
        self.discovery = discovery
        let prefixes = settings.topicPrefixes
        buttonStates = TopicPattern.buttonState.resolved(prefixes)
        deviceInfos = TopicPattern.deviceInfo.resolved(prefixes)
        plantStates = TopicPattern.plantState.resolved(prefixes)
    }

    /// The birth topic, to republish everything when Home Assistant starts.
    public var routes: [Route] {
        [
            Route(
                discovery.birthTopic, service: "homeassistant",
                handler: ClosureHandler { message, context in
                    guard message.payload == Array("online".utf8) else { return .none }
                    context.logger.info("Home Assistant is online; publishing discovery configs")
                    context.discovery.forgetAll()
                    return HandlerOutput(announcesDiscovery: true)
                })
        ]
    }

    var restartTopic: String { "\(settings.trellisPrefix)/request/devices/restart" }

    // MARK: Following what handlers publish

    /// The discovery messages that `publishes` call for: configs of things seen for the first time
    /// (or renamed), removals of things whose state was cleared.
    public func follow(_ publishes: [MQTTMessage], store: any TrellisStore, ledger: DiscoveryLedger) async
        -> [MQTTMessage]
    {
        var out: [MQTTMessage] = []
        for message in publishes where message.retain {
            let topic = message.topic
            if let id = buttonStates.name(in: topic) {
                guard !message.payload.isEmpty else { continue }
                out += publish(.button(id), signature: "", ledger: ledger) {
                    discovery.button(id: id, stateTopic: topic)
                }
            } else if let id = deviceInfos.name(in: topic) {
                if message.payload.isEmpty {
                    out += withdraw(.device(id), ledger: ledger)
                } else if let info = try? JSONDecoder().decode(DeviceInfo.self, from: Data(message.payload)) {
                    out += await device(id: id, name: info.name, modelID: info.modelID, store: store, ledger: ledger)
                }
            } else if let name = plantStates.name(in: topic) {
                guard let id = Int64(name) else { continue }
                if message.payload.isEmpty {
                    out += withdraw(.plant(id), ledger: ledger)
                } else if let state = try? JSONDecoder().decode(PlantInfo.self, from: Data(message.payload)) {
                    out += publish(.plant(id), signature: state.name, ledger: ledger) {
                        plantConfigs(id: id, name: state.name)
                    }
                }
            }
        }
        return out
    }

    // MARK: Everything at once

    /// Every config (Trellis, each plant, button and device) and each plant's current state.
    /// A store failure is logged and leaves out what could not be read.
    public func announceAll(store: any TrellisStore, ledger: DiscoveryLedger, logger: Logger) async -> [MQTTMessage] {
        var out: [MQTTMessage] = []
        await announce(store: store, ledger: ledger, logger: logger) { out += $0 }
        return out
    }

    /// What ``announceAll(store:ledger:logger:)`` returns, handed to `emit` one thing at a time (a
    /// plant's configs with its state, a button's, a device's), so that a caller can publish them
    /// at the pace the broker takes them: with 10,000 buttons the whole list is tens of megabytes.
    /// Stops, leaving the rest, once the calling task is cancelled.
    public func announce(
        store: any TrellisStore, ledger: DiscoveryLedger, logger: Logger,
        emit: ([MQTTMessage]) async -> Void
    ) async {
        await emit(
            publish(.trellis, signature: "", ledger: ledger) { discovery.trellis(statsTopic: settings.statsTopic) })
        do {
            for plant in try await store.plants() {
                try Task.checkCancellation()
                var messages = publish(.plant(plant.id), signature: plant.name, ledger: ledger) {
                    plantConfigs(id: plant.id, name: plant.name)
                }
                messages.append(try await plantState(plant, store: store))
                await emit(messages)
            }
            for id in try await store.buttonIDs() {
                try Task.checkCancellation()
                await emit(
                    publish(.button(id), signature: "", ledger: ledger) {
                        discovery.button(id: id, stateTopic: buttonStates.topic(id))
                    })
            }
            for device in try await store.devices(modelID: nil, powerstate: nil) {
                try Task.checkCancellation()
                await emit(
                    await self.device(
                        id: device.id, name: device.name, modelID: device.modelID, store: store, ledger: ledger))
            }
        } catch {
            // A store call cut short by the cancellation throws its own error: nothing to report then.
            if error is CancellationError || Task.isCancelled { return }
            logger.error("could not read the state store to publish Home Assistant discovery configs: \(error)")
        }
    }

    /// Clears every config this run published (discovery turned off or moved to another prefix).
    public static func withdrawAll(ledger: DiscoveryLedger) -> [MQTTMessage] {
        ledger.removeAll().map { MQTTMessage(topic: $0, payload: [], qos: .atLeastOnce, retain: true) }
    }

    /// The retained state of `plant`.
    func plantState(_ plant: StoredPlant, store: any TrellisStore) async throws -> MQTTMessage {
        try await plantState(id: plant.id, name: plant.name, store: store)
    }

    /// The state of the plant `id`, named `name`, from its sensors' latest readings.
    func plantState(id: Int64, name: String, store: any TrellisStore) async throws -> MQTTMessage {
        let records = try await store.sensorRecords(plant: name) ?? []
        let state = PlantState(id: id, name: name, sensors: records)
        return MQTTMessage(
            topic: plantStates.topic(String(id)), payload: state.payload(), qos: .atLeastOnce, retain: true)
    }

    // MARK: Helpers

    func plantConfigs(id: Int64, name: String) -> [DiscoveryConfig] {
        discovery.plant(
            id: id, name: name, stateTopic: plantStates.topic(String(id)),
            alertTopic: "\(settings.trellisPrefix)/alerts/\(TopicLevelEncoding.encode(name))")
    }

    func deviceConfigs(id: String, name: String?, model: String?) -> [DiscoveryConfig] {
        discovery.device(
            id: id, name: name, model: model, infoTopic: deviceInfos.topic(id),
            restartTopic: restartTopic)
    }

    /// A device's configs, its model named as the store names it.
    private func device(
        id: String, name: String?, modelID: String?, store: any TrellisStore,
        ledger: DiscoveryLedger
    ) async -> [MQTTMessage] {
        let signature = "\(name ?? "")\u{0}\(modelID ?? "")"
        guard ledger.needs(.device(id), signature: signature, under: discovery) else { return [] }
        var model = modelID
        if let modelID, let record = try? await store.model(id: modelID) { model = record.name }
        return publish(.device(id), signature: signature, ledger: ledger) {
            deviceConfigs(id: id, name: name, model: model)
        }
    }

    /// `thing`'s configs, unless the ledger says they are published already as they are.
    private func publish(
        _ thing: DiscoveryThing, signature: String, ledger: DiscoveryLedger,
        _ configs: () -> [DiscoveryConfig]
    ) -> [MQTTMessage] {
        guard ledger.claim(thing, signature: signature, under: discovery) else { return [] }
        return configs().map { MQTTMessage(topic: $0.topic, payload: $0.payload, qos: .atLeastOnce, retain: true) }
    }

    /// Empty retained configs for `thing`, whether or not this run published them (a thing deleted
    /// while Trellis was stopped still has the configs an earlier run left).
    private func withdraw(_ thing: DiscoveryThing, ledger: DiscoveryLedger) -> [MQTTMessage] {
        _ = ledger.remove(thing, under: discovery)
        return discovery.topics(of: thing).map { MQTTMessage(topic: $0, payload: [], qos: .atLeastOnce, retain: true) }
    }

    private struct DeviceInfo: Decodable {
        var name: String?
        var modelID: String?
        enum CodingKeys: String, CodingKey {
            case name
            case modelID = "model_id"
        }
    }

    private struct PlantInfo: Decodable { var name: String }
}
