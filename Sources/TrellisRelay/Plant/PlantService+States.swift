import TrellisCore
import TrellisMQTTTypes
import TrellisStore

/// The retained `trellis/plants/<id>/state` of each plant (see `PlantState`), published while
/// Home Assistant discovery is on: after a reading of one of its sensors, when it is added, and
/// cleared (an empty retained payload) when it is deleted, which also removes it from Home Assistant.
extension PlantService {
    /// The states of the plants that `sensor` belongs to.
    func plantStates(withSensor sensor: String, context: HandlerContext) async throws -> [MQTTMessage] {
        guard let homeAssistant = HomeAssistantService(settings: settings) else { return [] }
        var out: [MQTTMessage] = []
        for plant in try await context.store.plants() where plant.sensors.contains(sensor) {
            out.append(try await homeAssistant.plantState(plant, store: context.store))
        }
        return out
    }

    /// The states of plants added or renamed since `before`, and cleared states of plants deleted since.
    func plantStateChanges(since before: [StoredPlant], context: HandlerContext) async -> [MQTTMessage] {
        guard let homeAssistant = HomeAssistantService(settings: settings) else { return [] }
        do {
            let after = try await context.store.plants()
            let afterIDs = Set(after.map(\.id))
            var out: [MQTTMessage] = []
            for plant in before where !afterIDs.contains(plant.id) {
                out.append(MQTTMessage(topic: settings.plantStateTopic(id: plant.id), payload: [], qos: .atLeastOnce, retain: true))
            }
            let namesBefore = Dictionary(before.map { ($0.id, $0.name) }, uniquingKeysWith: { first, _ in first })
            for plant in after where namesBefore[plant.id] != plant.name {
                out.append(try await homeAssistant.plantState(plant, store: context.store))
            }
            return out
        } catch {
            context.logger.error("could not read the plants to publish their states: \(error)")
            return []
        }
    }
}
