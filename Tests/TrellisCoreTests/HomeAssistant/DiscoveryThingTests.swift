import Testing
import TrellisCore

/// The topics a thing's configs are cleared from are rebuilt from the thing alone: they must be
/// exactly the topics its builder publishes on, for every kind, id and prefix.
struct DiscoveryThingTests {
    static let discoveries = [
        HomeAssistantDiscovery(),
        HomeAssistantDiscovery(prefix: "site/ha", trellisPrefix: "greenhouse/relay")
    ]

    static func built(_ thing: DiscoveryThing, by discovery: HomeAssistantDiscovery) -> [DiscoveryConfig] {
        switch thing {
        case .trellis: discovery.trellis(statsTopic: "trellis/stats")
        case let .plant(id): discovery.plant(id: id, name: "Fern", stateTopic: "s", alertTopic: "a")
        case let .button(id): discovery.button(id: id, stateTopic: "s")
        case let .device(id): discovery.device(id: id, name: nil, model: nil, infoTopic: "i", restartTopic: "r")
        }
    }

    @Test(
        arguments: discoveries,
        [
            DiscoveryThing.trellis, .plant(3), .plant(-1), .button("hall"), .button("a b/ü_1"), .device("pump-1"),
            .device("x+y")
        ])
    func topicsAreTheBuildersTopics(discovery: HomeAssistantDiscovery, thing: DiscoveryThing) {
        #expect(discovery.topics(of: thing) == Self.built(thing, by: discovery).map(\.topic))
        #expect(
            discovery.topics(of: thing).allSatisfy {
                $0.hasPrefix("\(discovery.prefix)/") && $0.contains("/\(discovery.node(of: thing))/")
            })
    }

    @Test(arguments: ["hall", "pump-1", "front door", "a_b", "ü/ñ+✓", "_", "A-Z09", "x\u{0}y"])
    func decodingUndoesEncoding(id: String) {
        #expect(DiscoveryID.decode(Substring(DiscoveryID.encode(id))) == id)
    }

    @Test(arguments: ["_41", "a_4", "a_", "_zz", "_2F", "a b", "_ff", "é"])
    func decodingRefusesWhatEncodingNeverWrites(text: String) {
        #expect(DiscoveryID.decode(Substring(text)) == nil)
    }

    @Test func everyKindHasItsOwnEntities() {
        for kind in DiscoveryThing.Kind.allCases {
            let entities = HomeAssistantDiscovery.entities(of: kind).map { "\($0.component)/\($0.object)" }
            #expect(!entities.isEmpty)
            #expect(Set(entities).count == entities.count)
        }
        #expect(DiscoveryThing.button("b").kind == .button)
        #expect(DiscoveryThing.trellis.kind.rawValue == "trellis")
    }
}
