import Foundation
import Synchronization
import TrellisCore
import TrellisMQTTTypes
import TrellisStore

/// The plant catalog's live side: care alerts for tracker plants linked to a species.
///
/// It sees every reading on `rpi/sensors/<sensor>` (the plant service stores it; the relay hands
/// a message to every matching route) and, for each linked plant with that sensor, compares the
/// latest readings with the species' needs. The retained `trellis/alerts/<plant>` is published
/// only when an alert starts or clears, and each start and clear is queued for the notification
/// rules that take `care_alert` (docs/notifications.md). The first message it handles imports the starter
/// catalog if the catalog is empty.
public final class CatalogService: Sendable {
    let settings: RelaySettings
    /// Degrees °F above a species' minimum temperature below which a reading is `cold`.
    let coldMargin: Double
    private let starterChecked = Mutex(false)

    public init(settings: RelaySettings, coldMargin: Double = CareAlerts.defaultColdMargin) {
        self.settings = settings
        self.coldMargin = coldMargin
    }

    /// The retained care-alert topic of a plant; a name that cannot be one topic level is percent-encoded.
    public func alertTopic(plant: String) -> String {
        "\(settings.trellisPrefix)/alerts/\(TopicLevelEncoding.encode(plant))"
    }

    /// This service's entries of the routing table.
    public var routes: [Route] {
        [
            Route(
                "\(settings.plantPrefix)/sensors/+", service: "catalog",
                handler: ClosureHandler { message, context in
                    await self.handleReading(message, sensor: context.captures[0], context: context)
                })
        ]
    }

    /// Imports the starter catalog into an empty catalog, once per service.
    func ensureStarterCatalog(_ context: HandlerContext) async {
        guard !starterChecked.withLock({ $0 }) else { return }
        do {
            let imported = try await StarterCatalog.seedIfEmpty(context.store)
            starterChecked.withLock { $0 = true }
            if imported > 0 {
                context.logger.info("imported the starter catalog", metadata: ["species": "\(imported)"])
            }
        } catch {
            context.logger.error("could not import the starter catalog: \(error)")
        }
    }

    /// Re-judges the care of every linked plant with this sensor. Unusable readings are left to the
    /// plant service, which dead-letters them; nothing is rejected twice.
    func handleReading(_ message: MQTTMessage, sensor rawSensor: String, context: HandlerContext) async -> HandlerOutput
    {
        await ensureStarterCatalog(context)
        guard let sensor = SensorAddress.normalize(rawSensor),
            case let .success(report) = SensorReport.decode(message.payload),
            !(message.retain && report.at == nil),
            settings.futureTimes.admits(report.at, now: context.now)
        else { return .none }
        do {
            var output = HandlerOutput()
            for linked in try await context.store.linkedPlants(sensor: sensor) {
                output.merge(try await judge(linked, context: context))
            }
            return output
        } catch {
            context.logger.error("could not judge the care of plants with sensor \(sensor): \(error)")
            return .none
        }
    }

    /// Compares a linked plant's readings with its species and publishes its alerts when they changed.
    func judge(_ linked: LinkedPlant, context: HandlerContext) async throws -> HandlerOutput {
        let conditions = CareAlerts.evaluate(linked.readings, species: linked.species, coldMargin: coldMargin)
        let router = NotificationRouter(plan: context.settings.notifications)
        let (plant, now) = (linked.plant, context.now)
        // The notifications of what started and cleared are queued in the update's transaction.
        let update = try await context.store.updateCareAlerts(plant: plant, conditions: conditions, at: now) {
            update in
            NotificationRouter.Event.careAlerts(plant: plant, update: update).flatMap {
                router.notifications(for: $0, at: now)
            }
        }
        guard update.changed else { return .none }
        return HandlerOutput(publishes: [
            alertMessage(plant: linked.plant, symbol: linked.species.symbol, alerts: update.alerts)
        ])
    }

    /// After a plant was renamed (its link and alerts moved with it in the store): when it is
    /// linked, the retained alerts topic of the old name is cleared and the plant's alert state,
    /// judged afresh, is published under the new name.
    func renamed(from old: String, to new: String, context: HandlerContext) async throws -> HandlerOutput {
        guard let linked = try await context.store.linkedPlant(plant: new) else { return .none }
        let conditions = CareAlerts.evaluate(linked.readings, species: linked.species, coldMargin: coldMargin)
        let update = try await context.store.updateCareAlerts(plant: new, conditions: conditions, at: context.now)
        return HandlerOutput(publishes: [
            MQTTMessage(topic: alertTopic(plant: old), payload: [], qos: .atLeastOnce, retain: true),
            alertMessage(plant: new, symbol: linked.species.symbol, alerts: update.alerts)
        ])
    }

    /// The retained `trellis/alerts/<plant>` message.
    func alertMessage(plant: String, symbol: String, alerts: [CareAlert]) -> MQTTMessage {
        let body = AlertBody(
            plant: plant, symbol: symbol, ok: alerts.isEmpty,
            alerts: alerts.map {
                AlertBody.Item(
                    kind: $0.kind.rawValue, sensor: $0.sensor, value: $0.value, limit: $0.limit,
                    since: ISO8601Time.format($0.since))
            })
        return MQTTMessage(
            topic: alertTopic(plant: plant), payload: CatalogJSON.render(body), qos: .atLeastOnce, retain: true)
    }

    /// The payload of `trellis/alerts/<plant>`.
    struct AlertBody: Encodable {
        struct Item: Encodable {
            var kind: String
            var sensor: String
            var value: Double
            var limit: Double
            var since: String
        }

        var plant: String
        var symbol: String
        var ok: Bool
        var alerts: [Item]
    }
}

/// Compact JSON with sorted keys, as every Trellis JSON payload is written.
enum CatalogJSON {
    static func render(_ value: some Encodable) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        do {
            return Array(try encoder.encode(value))
        } catch {
            preconditionFailure("encoding plain value types to JSON cannot fail: \(error)")
        }
    }
}
