import TrellisCore

extension HomeAssistantService {
    /// The entities (`<component>/<object>`) of each kind of thing, which the sweep keeps a config
    /// under the current prefix for when its thing exists.
    static func entities() -> [DiscoveryThing.Kind: Set<String>] {
        Dictionary(
            uniqueKeysWithValues: DiscoveryThing.Kind.allCases.map { kind in
                (kind, Set(HomeAssistantDiscovery.entities(of: kind).map { "\($0.component)/\($0.object)" }))
            })
    }
}
