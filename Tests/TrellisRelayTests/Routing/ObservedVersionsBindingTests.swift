import Foundation
import Logging
import Synchronization
import Testing
import TrellisMQTT
import TrellisRelay
import TrellisStore
import TrellisTestSupport

/// The relay binds a fresh ``ObservedVersions`` to each message it hands a route, but only for a
/// store that reads it: on PostgreSQL each message's handling starts with no versions seen (so a
/// kept answer is given only to a message whose admission saw it current), on SQLite nothing is
/// bound and the request path pays for no binding.
@Suite("Observed versions: one per message, where the store reads them")
struct ObservedVersionsBindingTests {
    @Test("each message gets its own value on a store that reads them, none otherwise", arguments: StoreKind.allCases)
    func boundPerMessage(_ kind: StoreKind) async throws {
        try await withStore(kind) { store in
            // The values themselves are kept, so that the first is not freed and its address reused.
            let seen = Mutex<[ObservedVersions?]>([])
            let note = ClosureHandler { _, _ in
                seen.withLock { $0.append(ObservedVersions.current) }
                return .none
            }
            let engine = RelayEngine(
                routes: RoutingTable([Route("probe/+", service: "probe", handler: note)]),
                store: store, settings: RelaySettings(), logger: Logger(label: "test"))
            _ = await engine.handle(MQTTMessage(topic: "probe/a", payload: []), at: Date())
            _ = await engine.handle(MQTTMessage(topic: "probe/b", payload: []), at: Date())
            let values = seen.withLock { $0 }
            #expect(store.readsObservedVersions == (kind == .postgres))
            if store.readsObservedVersions {
                #expect(values.count == 2 && values.allSatisfy { $0 != nil } && values[0] !== values[1])
            } else {
                #expect(values.count == 2 && values.allSatisfy { $0 == nil })
            }
        }
    }
}
