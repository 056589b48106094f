import TrellisCore
import TrellisStore

extension HomeAssistantService {
    /// The node ids of every thing today's state has (Trellis, each plant, button and device, the
    /// plants and devices as the caller read them), read from the store, so that a thing another relay of the share group created counts as well as
    /// this relay's. The sweep keeps a config under the current prefix only when its node is one of
    /// these and its entity one its kind has (``entities()``).
    func nodes(store: any TrellisStore, plants: [StoredPlant], deviceIDs: Set<String>) async throws -> Set<String> {
        var nodes: Set<String> = [discovery.base]
        for plant in plants { nodes.insert(discovery.plantNode(id: plant.id)) }
        for id in try await store.buttonIDs() { nodes.insert(discovery.buttonNode(id: id)) }
        for id in deviceIDs { nodes.insert(discovery.deviceNode(id: id)) }
        return nodes
    }

    /// The entities (`<component>/<object>`) of each kind of node, by the kind's name.
    func entities() -> [String: Set<String>] {
        Dictionary(uniqueKeysWithValues: DiscoveryThing.Kind.allCases.map { kind in
            (kind.rawValue, Set(HomeAssistantDiscovery.entities(of: kind).map { "\($0.component)/\($0.object)" }))
        })
    }
}
