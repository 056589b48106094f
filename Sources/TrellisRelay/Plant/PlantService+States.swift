import TrellisCore
import TrellisMQTTTypes
import TrellisStore

/// The retained `trellis/plants/<id>/state` of each plant (see `PlantState`), published while
/// Home Assistant discovery is on: after a reading of one of its sensors, when it is added, and
/// cleared (an empty retained payload) when it is deleted, which also removes it from Home Assistant.
extension PlantService {
    /// The states of the plants that `sensor` belongs to.
    func plantStates(withSensor sensor: String, context: HandlerContext) async throws -> [MQTTMessage] {
        guard let homeAssistant else { return [] }
        var out: [MQTTMessage] = []
        for plant in try await context.store.plants() where plant.sensors.contains(sensor) {
            out.append(try await homeAssistant.plantState(plant, store: context.store))
        }
        return out
    }

    /// What follows a change of the plant list: the plant's retained state (Home Assistant discovery)
    /// published under its new name, or cleared when it was deleted; on a rename, the catalog's care
    /// alerts moved to the new name. Each from the change itself, so two relays sharing a store each
    /// publish what their own change did.
    func followUps(of change: PlantChange, context: HandlerContext) async -> HandlerOutput {
        var output = HandlerOutput()
        if let homeAssistant {
            switch change {
            case let .deleted(id):
                output.publish(
                    MQTTMessage(topic: settings.plantStateTopic(id: id), payload: [], qos: .atLeastOnce, retain: true))
            case let .added(id, name), let .renamed(id, _, name):
                do {
                    output.publish(try await homeAssistant.plantState(id: id, name: name, store: context.store))
                } catch {
                    context.logger.error("could not read the plant \(name) to publish its state: \(error)")
                }
            }
        }
        if case let .renamed(_, old, new) = change, let catalog {
            do {
                output.merge(try await catalog.renamed(from: old, to: new, context: context))
            } catch {
                context.logger.error("could not move the care alerts of \(old) to \(new): \(error)")
            }
        }
        return output
    }
}
