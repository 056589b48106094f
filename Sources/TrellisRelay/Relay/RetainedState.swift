import TrellisCore
import TrellisStore

/// The retained state topics a relay publishes from the store, and their payloads as the store
/// has them now.
enum RetainedState {
    enum Kind { case button(String), device(String), model(String) }

    /// What `topic` is the state of, nil for any other topic.
    static func kind(of topic: String, settings: RelaySettings) -> Kind? {
        let levels = topic.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        let buttons =
            settings.buttonPrefix.split(separator: "/", omittingEmptySubsequences: false).map(String.init) + ["buttons"]
        if levels.count == buttons.count + 2, Array(levels.prefix(buttons.count)) == buttons, levels.last == "state" {
            return .button(levels[buttons.count])
        }
        if levels.count == 3, levels[0] == "devices", levels[2] == "info" { return .device(levels[1]) }
        let models =
            settings.trellisPrefix.split(separator: "/", omittingEmptySubsequences: false).map(String.init) + ["models"]
        if levels.count == models.count + 2, Array(levels.prefix(models.count)) == models, levels.last == "info" {
            return .model(levels[models.count])
        }
        return nil
    }

    /// The payload `topic` should hold now: the state read from the store, `[]` (clearing the
    /// retained message) for an entity that is gone, nil when nothing should be published.
    static func current(_ topic: String, store: any TrellisStore, settings: RelaySettings) async throws -> [UInt8]? {
        switch kind(of: topic, settings: settings) {
        case let .button(id)?:
            guard let snapshot = try await store.button(id: id) else { return nil }
            return ButtonPayloads.state(snapshot)
        case let .device(id)?:
            return try await store.device(id: id).map(DevicePayloads.info) ?? []
        case let .model(id)?:
            return try await store.model(id: id).map(DevicePayloads.modelInfo) ?? []
        case nil:
            return nil
        }
    }
}
