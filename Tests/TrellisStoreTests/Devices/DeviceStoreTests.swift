import Foundation
import Testing
import TrellisTestSupport
import TrellisCore
@testable import TrellisStore
@testable import TrellisStoreSQLite

@Suite("DeviceStore on SQLite")
struct DeviceStoreTests {
    @Test("a status registers the device; repeating it changes nothing", arguments: StoreKind.allCases)
    func statusRegisters(_ kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            let first = try await store.recordDeviceStatus(
                id: "n1", powerstate: .online, maxDevices: 10, at: instant(1))
            #expect(
                first
                    == DeviceUpdate(
                        device: DeviceRecord(id: "n1", powerstate: .online), registered: true, changed: true))
            let again = try await store.recordDeviceStatus(
                id: "n1", powerstate: .online, maxDevices: 10, at: instant(2))
            #expect(again.changed == false && again.registered == false)
            let offline = try await store.recordDeviceStatus(
                id: "n1", powerstate: .offline, maxDevices: 10, at: instant(3))
            #expect(
                offline
                    == DeviceUpdate(
                        device: DeviceRecord(id: "n1", powerstate: .offline), registered: false, changed: true))
        }
    }

    @Test("telemetry sets only what it reports; null clears", arguments: StoreKind.bothStores)
    func telemetry(_ kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            _ = try await store.recordTelemetry(
                id: "n1", telemetry: DeviceTelemetry(rssi: .some(-60), agentID: .some("a")),
                maxDevices: 10, at: instant(1))
            let same = try await store.recordTelemetry(
                id: "n1", telemetry: DeviceTelemetry(rssi: .some(-60)), maxDevices: 10, at: instant(2))
            #expect(same.changed == false)
            let cleared = try await store.recordTelemetry(
                id: "n1", telemetry: DeviceTelemetry(agentID: .some(nil), agentStatus: .some("online")),
                maxDevices: 10, at: instant(3))
            #expect(cleared.changed)
            #expect(
                try await store.device(id: "n1")
                    == DeviceRecord(id: "n1", rssi: -60, agentID: nil, agentStatus: "online"))
        }
    }

    @Test("past the registry cap unknown devices are refused; known ones still update", arguments: StoreKind.allCases)
    func registryCap(_ kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            for id in ["a", "b"] {
                #expect(try await store.registerDevice(id: id, maxDevices: 2, at: instant(1)).registered)
            }
            #expect(try await store.registerDevice(id: "c", maxDevices: 2, at: instant(1)).device == nil)
            #expect(
                try await store.recordDeviceStatus(id: "c", powerstate: .online, maxDevices: 2, at: instant(1)).device
                    == nil)
            #expect(
                try await store.recordTelemetry(
                    id: "c", telemetry: DeviceTelemetry(rssi: .some(-1)), maxDevices: 2, at: instant(1)
                ).device == nil)
            #expect(
                try await store.recordDeviceStatus(id: "a", powerstate: .online, maxDevices: 2, at: instant(2)).changed)
            #expect(try await store.deviceCount() == 2)
        }
    }

    @Test("models: create with unique names, rename, assign, list and filter", arguments: StoreKind.allCases)
    func models(_ kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            let node = try #require(try await store.createModel(name: "Node", at: instant(1)))
            #expect(node == ModelRecord(id: "m1", name: "Node"))
            #expect(try await store.createModel(name: "Node", at: instant(2)) == nil)
            let hub = try #require(try await store.createModel(name: "Hub", at: instant(2)))
            #expect(hub.id == "m2")
            #expect(try await store.renameModel(id: "m2", name: "Node") == .nameTaken)
            #expect(try await store.renameModel(id: "m9", name: "X") == .notFound)
            #expect(
                try await store.renameModel(id: "m2", name: "Gateway")
                    == .renamed(ModelRecord(id: "m2", name: "Gateway")))

            _ = try await store.recordDeviceStatus(id: "b", powerstate: .online, maxDevices: 10, at: instant(3))
            _ = try await store.registerDevice(id: "a", maxDevices: 10, at: instant(3))
            #expect(try await store.updateDevice(id: "zz", name: nil, modelID: .some("m1")) == .deviceNotFound)
            #expect(try await store.updateDevice(id: "a", name: nil, modelID: .some("m7")) == .modelNotFound)
            #expect(try await store.updateDevice(id: "a", name: nil, modelID: .some("junk")) == .modelNotFound)
            let edit = try await store.updateDevice(id: "a", name: .some("Kitchen"), modelID: .some("m1"))
            #expect(
                edit
                    == .updated(
                        before: DeviceRecord(id: "a"), after: DeviceRecord(id: "a", name: "Kitchen", modelID: "m1")))
            _ = try await store.updateDevice(id: "b", name: nil, modelID: .some("m1"))
            #expect(try await store.model(id: "m1") == ModelRecord(id: "m1", name: "Node", devices: ["a", "b"]))
            #expect(try await store.devices(modelID: "m1", powerstate: .online).map(\.id) == ["b"])
            #expect(try await store.devices(modelID: "m1", powerstate: .offline).map(\.id) == ["a"])
            #expect(try await store.devices(modelID: "m2", powerstate: nil) == [])
            #expect(try await store.models().map(\.devices) == [["a", "b"], []])

            #expect(try await store.deleteModel(id: "m1") == ["a", "b"])
            #expect(try await store.deleteModel(id: "m1") == nil)
            #expect(try await store.device(id: "a")?.modelID == nil)
            #expect(try await store.device(id: "a")?.name == "Kitchen")
            // Ids are never reused.
            #expect(try await store.createModel(name: "Node", at: instant(4))?.id == "m3")
        }
    }

    @Test("builds are numbered 1, 2, … per model; code by number or the latest", arguments: StoreKind.allCases)
    func builds(_ kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            _ = try await store.createModel(name: "A", at: instant(0))
            _ = try await store.createModel(name: "B", at: instant(0))
            #expect(try await store.addBuild(model: "m1", deviceCode: "d1", agentCode: "a1", at: instant(1)) == 1)
            #expect(try await store.addBuild(model: "m1", deviceCode: "d2", agentCode: "a2", at: instant(2)) == 2)
            #expect(try await store.addBuild(model: "m2", deviceCode: "x", agentCode: "y", at: instant(3)) == 1)
            #expect(try await store.addBuild(model: "m9", deviceCode: "x", agentCode: "y", at: instant(3)) == nil)
            #expect(
                try await store.codeRevision(model: "m1", build: nil)
                    == CodeRevision(model: "m1", build: 2, deviceCode: "d2", agentCode: "a2", createdAt: instant(2)))
            #expect(try await store.codeRevision(model: "m1", build: 1)?.deviceCode == "d1")
            #expect(try await store.codeRevision(model: "m1", build: 3) == nil)
            #expect(
                try await store.builds(model: "m1") == [
                    BuildSummary(build: 1, createdAt: instant(1)), BuildSummary(build: 2, createdAt: instant(2))
                ])
            #expect(try await store.builds(model: "m9") == nil)
            #expect(try await store.model(id: "m1")?.latestBuild == 2)
        }
    }

    @Test("logs keep the newest N per device, oldest first; since and limit filter", arguments: StoreKind.allCases)
    func logs(_ kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            _ = try await store.registerDevice(id: "a", maxDevices: 10, at: instant(0))
            _ = try await store.registerDevice(id: "b", maxDevices: 10, at: instant(0))
            for index in 1...250 {
                try await store.appendDeviceLog(
                    device: "a",
                    entry: DeviceLogEntry(timestamp: instant(Double(index)), type: "Device", message: "line \(index)"),
                    limit: 200)
            }
            try await store.appendDeviceLog(device: "b", entry: .status("online", at: instant(1)), limit: 200)
            // A line for an unknown device is dropped without failing its batch.
            try await store.appendDeviceLog(device: "ghost", entry: .status("online", at: instant(1)), limit: 200)
            let all = try await store.deviceLog(device: "a", since: nil, limit: 200)
            #expect(all.count == 200)
            #expect(all.first?.message == "line 51")
            #expect(all.last?.message == "line 250")
            #expect(
                try await store.deviceLog(device: "a", since: instant(241), limit: 200).map(\.message)
                    == (241...250).map { "line \($0)" })
            #expect(
                try await store.deviceLog(device: "a", since: nil, limit: 3).map(\.message) == [
                    "line 248", "line 249", "line 250"
                ])
            #expect(
                try await store.deviceLog(device: "b", since: nil, limit: 200) == [.status("online", at: instant(1))])
            #expect(try await store.deviceLog(device: "ghost", since: nil, limit: 200) == [])

            #expect(try await store.deleteDevice(id: "a")?.id == "a")
            #expect(try await store.deleteDevice(id: "a") == nil)
            _ = try await store.registerDevice(id: "a", maxDevices: 10, at: instant(300))
            #expect(try await store.deviceLog(device: "a", since: nil, limit: 200) == [])
        }
    }

    /// Every log line looks its device up first; emptying the caches after each batch of log lines
    /// made that a database read per line. Only what a cached query reads ends the cached answers.
    @Test(
        "log lines written behind keep the cached device; a reading written behind ends it",
        arguments: [StoreKind.inMemory, .directory])
    func cacheKeptAcrossLogLines(_ kind: StoreKind) async throws {
        try await withSQLiteStore(kind) { store async throws in
            _ = try await store.registerDevice(id: "a", maxDevices: 10, at: instant(0))
            #expect(try await store.device(id: "a")?.id == "a")
            #expect(store.caches.devices.lookup("a").answer?.id == "a")
            for index in 1...10 {
                try await store.appendDeviceLog(
                    device: "a", entry: .status("line \(index)", at: instant(Double(index))), limit: 200)
            }
            try await store.flush()
            #expect(try await store.deviceLog(device: "a", since: nil, limit: 200).count == 10)
            #expect(store.caches.devices.lookup("a").answer?.id == "a", "a batch of log lines changes no cached answer")
            try await store.recordReading(sensor: "0x36", moisture: 5, temperature: 70, at: instant(20))
            try await store.flush()
            #expect(store.caches.devices.lookup("a").answer == nil, "a batch with a reading ends the cached answers")
            #expect(try await store.device(id: "a")?.id == "a")
        }
    }

    @Test("the fleet survives reopening the store")
    func durability() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try SQLiteStore(directory: directory.path)
        _ = try await store.createModel(name: "Node", at: instant(0))
        _ = try await store.recordDeviceStatus(id: "n1", powerstate: .online, maxDevices: 10, at: instant(1))
        _ = try await store.updateDevice(id: "n1", name: .some("Door"), modelID: .some("m1"))
        _ = try await store.addBuild(model: "m1", deviceCode: "d", agentCode: "a", at: instant(2))
        try await store.appendDeviceLog(device: "n1", entry: .status("online", at: instant(1)), limit: 200)
        try await store.close()

        let reopened = try SQLiteStore(directory: directory.path)
        #expect(
            try await reopened.device(id: "n1")
                == DeviceRecord(id: "n1", name: "Door", powerstate: .online, modelID: "m1"))
        #expect(
            try await reopened.model(id: "m1") == ModelRecord(id: "m1", name: "Node", devices: ["n1"], latestBuild: 1))
        #expect(
            try await reopened.deviceLog(device: "n1", since: nil, limit: 200) == [.status("online", at: instant(1))])
        try await reopened.close()
    }

    /// The other devices' logs are written by SQLite in one statement, at the fixture's times: two
    /// million appends through the store one by one took a minute alone and more than five beside
    /// the rest of the suite on two cores (the appends' own cost is the bench's, `make bench-scaling`).
    /// The device read back fills its log through the store, past its limit.
    @Test(
        "10,000 devices with 200 log entries each: listing all and reading a log (prints the time)",
        .timeLimit(.minutes(5)))
    func scale() async throws {
        try await withSQLiteStore(.directory) { store async throws in
            for index in 0..<10_000 {
                _ = try await store.registerDevice(id: "dev\(index)", maxDevices: 100_000, at: instant(0))
            }
            try await store.writer.write { db in
                try db.execute(
                    sql: """
                        WITH RECURSIVE line(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM line WHERE n < 199)
                        INSERT INTO device_log (device_id, at, type, message)
                        SELECT device.id, ? + line.n * 1000, 'Device', 'line ' || line.n FROM device, line
                        WHERE device.id <> 'dev9999' ORDER BY device.id, line.n
                        """, arguments: [instant(0).storeMilliseconds])
            }
            for line in 0..<250 {
                try await store.appendDeviceLog(
                    device: "dev9999",
                    entry: DeviceLogEntry(timestamp: instant(Double(line)), type: "Device", message: "line \(line)"),
                    limit: 200)
            }
            let clock = ContinuousClock()
            let start = clock.now
            let devices = try await store.devices(modelID: nil, powerstate: nil)
            let listed = clock.now - start
            #expect(devices.count == 10_000)
            let log = try await store.deviceLog(device: "dev9999", since: nil, limit: 200)
            #expect(log.count == 200)
            #expect(log.first?.message == "line 50" && log.last?.message == "line 249", "the newest 200, oldest first")
            #expect(try await store.deviceLog(device: "dev0", since: nil, limit: 200).count == 200)
            print("listing 10,000 devices took \(listed)")
        }
    }
}
