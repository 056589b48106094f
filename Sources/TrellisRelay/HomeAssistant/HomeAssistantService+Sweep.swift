import TrellisCore
import TrellisStore

extension HomeAssistantService {
    /// The topics of every discovery config that today's state calls for: what an announcement
    /// publishes, read from the store, so that a config another relay of the share group published
    /// for a thing it created counts as well as this relay's. The sweep clears the rest of
    /// Trellis's configs under the prefix.
    func configTopics(store: any TrellisStore, plants: [StoredPlant]) async throws -> Set<String> {
        var topics = Set(discovery.trellis(statsTopic: settings.statsTopic).map(\.topic))
        for plant in plants {
            topics.formUnion(plantConfigs(id: plant.id, name: plant.name).map(\.topic))
        }
        for id in try await store.buttonIDs() {
            topics.formUnion(discovery.button(id: id, stateTopic: "\(buttonsPrefix)\(id)/state").map(\.topic))
        }
        for device in try await store.devices(modelID: nil, powerstate: nil) {
            topics.formUnion(deviceConfigs(id: device.id, name: device.name, model: device.modelID).map(\.topic))
        }
        return topics
    }
}
