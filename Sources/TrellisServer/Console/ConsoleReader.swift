import Foundation
import TrellisCore
import TrellisRelay
import TrellisStore

/// What the console's pages show, read from the relay's store through the operations the relay
/// and the commands already use (nothing is written), and from the probes.
struct ConsoleReader: Sendable {
    let relay: RelayService
    let probes: Probes

    /// Dead letters `/dead-letters` shows.
    static let deadLetterLimit = 100
    /// Buttons `/buttons` shows (their ids sorted).
    static let buttonLimit = 500

    var store: any TrellisStore { relay.engine.store }

    func overview() async -> ConsoleOverview {
        ConsoleOverview(
            readiness: await probes.readiness(), handled: relay.client.consumerProgress.handled,
            counts: await store.counts(within: .seconds(1)), writes: await store.writeStatus())
    }

    /// Every plant with its sensors' readings and, when linked to a species, its alerts.
    func plants() async throws -> [ConsolePlant] {
        let plants = try await store.plants()
        let records = Dictionary(grouping: try await store.sensorRecords(plant: nil) ?? [], by: \.plant)
        let facts = try await store.browseFacts(plants.map { EntityRef(.plant, String($0.id)) }, detail: false)
        return plants.map { plant in
            let values = facts[EntityRef(.plant, String(plant.id))]?.values ?? [:]
            let species = values["species"].map { symbol in values["species_name"].map { "\($0) (\(symbol))" } ?? symbol
            }
            return ConsolePlant(
                name: plant.name, sensors: records[plant.name] ?? [], species: species, alerts: values["alerts"])
        }
    }

    /// The plant's history from `from` to `to`, as fine as one answer allows; nil when no plant has that name.
    func history(of name: String, from: Date, to: Date) async throws -> [HistoryPoint]? {
        let rawDays = relay.engine.settings.historyRetention.rawDays
        let plan = HistoryPlan(
            from: from, to: to, step: nil, rawSince: to.addingTimeInterval(-Double(rawDays) * 86_400))
        return try await store.history(of: .plant(name), plan: plan)
    }

    /// Each pressed button's state, by id.
    func buttons() async throws -> [ButtonState] {
        var buttons: [ButtonState] = []
        for id in try await store.buttonIDs().prefix(Self.buttonLimit) {
            if let button = try await store.button(id: id) { buttons.append(button) }
        }
        return buttons
    }

    func devices() async throws -> [DeviceRecord] {
        try await store.devices(modelID: nil, powerstate: nil)
    }

    /// The device and its log's tail; nil when no device has that id.
    func device(_ id: String) async throws -> (DeviceRecord, [DeviceLogEntry])? {
        guard let device = try await store.device(id: id) else { return nil }
        return (device, try await store.deviceLog(device: id, since: nil, limit: ConsolePage.logTail))
    }

    func deadLetters() async throws -> [StoredDeadLetter] {
        try await store.deadLetters(limit: Self.deadLetterLimit)
    }
}
