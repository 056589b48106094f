import Foundation
import Testing
import TrellisMQTT
@testable import TrellisRelay
import TrellisStoreSQLite
import TrellisTestSupport

/// The retained sweep: retained topics left by an earlier run (ghost devices in Home Assistant) are
/// cleared at start and after a change of discovery prefix; what still describes something, and
/// whatever is not Trellis's, stays. At start on a live relay and a real Mosquitto; the sweep's
/// decisions after that on the relay service over each store, with an ``OutletRecorder`` keeping
/// the retained messages.
@Suite("Stale retained topics swept")
struct RetainedSweepTests {
    /// Publishes each topic retained with a non-empty payload and waits until the broker took them.
    static func retain(_ topics: [String], with client: MQTTClient) async throws {
        for topic in topics {
            try await client.publishAndWait(
                topic: topic, payload: Array(#"{"left":"by an earlier run"}"#.utf8), retain: true)
        }
    }

    /// The retained messages a fresh subscription to `topics` receives (retained ones arrive first;
    /// a marker published afterwards ends them).
    static func retained(_ topics: [String], in relay: RelayHarness) async throws -> Set<String> {
        let reader = try await relay.connect()
        let inbox = try await MessageCollector.collecting(reader, subscribedTo: topics + ["test/marker"])
        try await reader.publishAndWait(topic: "test/marker", payload: [])
        try await inbox.wait(timeout: .seconds(30), "the marker after the retained messages") { messages in
            messages.contains { $0.topic == "test/marker" }
        }
        return Set(await inbox.all().filter { $0.retain && !$0.payload.isEmpty }.map(\.topic))
    }

    @Test(
        "at start: configs of deleted things and under an old prefix, and deleted devices', models' and plants' topics go; the rest stays"
    )
    func atStart() async throws {
        try await withRelayHarness { relay in
            let store = try SQLiteStore(directory: relay.stateDirectory)
            _ = try await store.addPlant(name: "Fern", sensors: ["0x36"], maxPlants: 10)
            _ = try await store.registerDevice(id: "pump-1", maxDevices: 10, at: Date())
            try await store.close()

            let stale = [
                "homeassistant/sensor/trellis_plant_99/moisture/config",
                "homeassistant/event/trellis_button_gone/press/config",
                "ha-old/binary_sensor/trellis/connectivity/config",
                "ha-old/sensor/trellis_device_pump-1/model/config",
                "devices/ghost/info",
                "trellis/models/ghost-model/info",
                "trellis/plants/42/state"
            ]
            let kept = [
                "homeassistant/sensor/zigbee2mqtt_0x00158d/temperature/config",
                "ha-old/sensor/other_node/temperature/config",
                "homeassistant/sensor/trellis_plant_1/moisture/config",
                "homeassistant/sensor/trellis_device_pump-1/model/config",
                "devices/pump-1/info",
                "trellis/plants/1/state"
            ]
            let seeder = try await relay.connect()
            try await Self.retain(stale + kept, with: seeder)
            let watcher = try await relay.connect()
            let inbox = try await MessageCollector.collecting(watcher, subscribedTo: stale)

            try await relay.startRelay()
            try await inbox.wait(timeout: .seconds(60), "every stale retained topic cleared") { messages in
                Set(messages.filter { $0.payload.isEmpty }.map(\.topic)) == Set(stale)
            }
            #expect(try await Self.retained(stale + kept, in: relay) == Set(kept))
        }
    }

    @Test("a sweep cancelled by the next announcement stays due and runs after it", arguments: StoreKind.bothStores)
    func cancelledSweepStaysDue(_ kind: StoreKind) async throws {
        try await withRecordedService(kind) { service, outlet in
            let first = "homeassistant/event/trellis_button_gone/press/config"
            outlet.retain([first])
            // The start's own sweep, done once it cleared what it found.
            await service.connectedAnnouncing()
            #expect(!outlet.retainedTopics.contains(first), "the start's sweep")
            #expect(outlet.messages.contains { $0.topic == first && $0.payload.isEmpty && $0.retain })

            let second = "homeassistant/event/trellis_button_left/press/config"
            outlet.retain([second])
            // A sweep due again (as after a prefix change), cancelled before the broker answers it:
            // what an announcement that replaces the one under way does to it.
            service.dueSweep.withLock { $0 = [] }
            await withTaskGroup(of: Void.self) { group in
                group.cancelAll()
                group.addTask { await service.sweepIfDue() }
            }
            #expect(service.dueSweep.withLock { $0 } != nil, "the cancelled sweep is no longer due")
            #expect(outlet.retainedTopics.contains(second))
            // The next announcement's sweep runs it.
            await service.sweepIfDue()
            #expect(!outlet.retainedTopics.contains(second))
        }
    }

    /// A prefix of several levels is swept only once it is in use (or was just left): the start
    /// sweep reads every one-level prefix but cannot guess deeper ones.
    @Test(
        "a move to a prefix of several levels clears the configs an earlier run left there, and this run's under the prefix left",
        arguments: StoreKind.bothStores)
    func afterPrefixChange(_ kind: StoreKind) async throws {
        try await withRecordedService(kind) { service, outlet in
            let earlierRun = "site/ha/event/trellis_button_old/press/config"
            let foreign = "site/ha/sensor/zigbee2mqtt_0x00158d/temperature/config"
            let connectivity = "binary_sensor/trellis/connectivity/config"
            outlet.retain([earlierRun, foreign])

            await service.connectedAnnouncing()
            #expect(outlet.retainedTopics.contains("homeassistant/\(connectivity)"), "this run's configs")
            #expect(outlet.retainedTopics.contains(earlierRun), "the start sweep leaves a deeper prefix alone")

            var moved = service.engine.settings
            moved.discoveryPrefix = "site/ha"
            try await service.apply(moved)
            await service.announced()
            #expect(!outlet.retainedTopics.contains("homeassistant/\(connectivity)"), "this run's config withdrawn")
            #expect(
                outlet.retainedTopics.intersection([earlierRun, foreign, "site/ha/\(connectivity)"])
                    == [foreign, "site/ha/\(connectivity)"], "the earlier run's swept, the foreign one kept")
        }
    }
}
