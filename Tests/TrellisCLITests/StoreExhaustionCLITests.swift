import Foundation
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
import Testing
import TrellisBroker
import TrellisMQTT
import TrellisStore
import TrellisStoreSQLite
import TrellisTestSupport
import TrellisApplication

/// `trellis run` with its state on a small tmpfs, flooded with QoS 1 log lines of 60 KB through a
/// real Mosquitto: the disk fills, Trellis says so (log, `/health`), and once there is room again
/// every line is stored, each once, whether Trellis kept running or was killed meanwhile. And a
/// state file that is not a usable database stops Trellis at start, naming the file (the store's
/// refusal and the command's line for it, in-process).
@Suite("Store exhaustion, end to end")
struct StoreExhaustionCLITests {
    static func line(_ index: Int) -> [UInt8] {
        Array(#"{"type":"Device","message":"line \#(index) \#(String(repeating: "x", count: 60_000))"}"#.utf8)
    }

    /// Sends `count` numbered lines to `devices/node1/log` at QoS 1, each acknowledged by the broker.
    static func flood(_ broker: TestBroker, count: Int) async throws {
        let node = try await TestClients.connect(to: broker, id: "node1")
        for index in 0..<count {
            try await node.publishAndWait(topic: "devices/node1/log", payload: line(index), qos: .atLeastOnce)
        }
        await node.shutdown()
    }

    /// The numbers of the lines stored for node1, read from the state after Trellis stopped.
    static func storedLines(_ state: String) async throws -> [Substring] {
        let store = try SQLiteStore(directory: state)
        let lines = try await store.deviceLog(device: "node1", since: nil, limit: 1000)
        try await store.close()
        return lines.map { $0.message.split(separator: " ")[1] }
    }

    /// Asks for the number of plants and waits for the answer: requests are handled in order, so
    /// the answer means every message sent before it was handled.
    static func roundTrip(_ broker: TestBroker, id: Int) async throws {
        let (asker, answers) = try await TestClients.connectCollecting(
            to: broker, id: "asker-\(id)", "rpi/fromrpi/asker-\(id)")
        let request = "ID:\(id);sender:asker-\(id);receiver:Host-RPI3B+;payload:;operation:REQ_numPlants"
        try await asker.publishAndWait(topic: "rpi/torpi/asker-\(id)", payload: Array(request.utf8))
        try await answers.messages(on: "rpi/fromrpi/asker-\(id)", timeout: .seconds(120))
        await asker.shutdown()
    }

    @Test(
        "3 MB tmpfs, 200 lines of 60 KB at QoS 1: loud while full, all 200 stored after the remount",
        .enabled(if: Tmpfs.usable, "needs root and mount(8)"))
    func floodRemountWhileRunning() async throws {
        try await withTestBroker { broker in
            let mount = try Tmpfs(megabytes: 3)
            defer { mount.remove() }
            let (trellis, ports) = try await TrellisBinary.startListening(
                { ports in
                    ["run", "--broker", broker.address, "--state", mount.path, "--metrics", "127.0.0.1:\(ports[0])"]
                }, ready: { ports in ["Server started and listening on 127.0.0.1:\(ports[0])"] })
            let port = ports[0]
            try await trellis.waitForOutput("connected to the broker")
            try await Self.flood(broker, count: 200)
            try await trellis.waitForOutput("the state store cannot commit", timeout: .seconds(60))
            #expect(trellis.output.contains("SQLITE_FULL"))
            let (status, body) = try await MetricsTests.waitFor("http://127.0.0.1:\(port)/health") { status, _ in
                status == 503
            }
            #expect(status == 503)
            #expect(body.contains(#""store_writable":false"#))
            #expect(body.contains("SQLITE_FULL"))
            let (_, metrics) = try await MetricsTests.waitFor("http://127.0.0.1:\(port)/metrics") { _, text in
                text.contains("trellis_store_writable 0")
            }
            #expect(metrics.contains("trellis_store_failed_commits_total"))

            try mount.remount("size=64m")
            try await trellis.waitForOutput("the state store commits again", timeout: .seconds(60))
            try await Self.roundTrip(broker, id: 1)
            _ = try await MetricsTests.waitFor("http://127.0.0.1:\(port)/health") { status, _ in status == 200 }
            #expect(try await trellis.terminate() == 0)
            let output = trellis.output
            #expect(
                output.components(separatedBy: "the state store commits again").count == 2, "recovery is logged once")

            let numbers = try await Self.storedLines(mount.path)
            print(
                "tmpfs flood: 200 lines of 60 KB sent at QoS 1 to a 3 MB tmpfs; \(numbers.count) stored after the remount, \(Set(numbers).count) distinct"
            )
            #expect(numbers.count == 200)
            #expect(Set(numbers).count == 200)
        }
    }

    @Test(
        "stopped (SIGKILL, or SIGTERM) while the tmpfs is full, started again with room: every line stored once",
        .enabled(if: Tmpfs.usable, "needs root and mount(8)"), arguments: [SIGKILL, SIGTERM])
    func stopWhileFull(_ signal: Int32) async throws {
        try await withTestBroker { broker in
            let mount = try Tmpfs(megabytes: 3)
            defer { mount.remove() }
            let trellis = try TrellisBinary.start(["run", "--broker", broker.address, "--state", mount.path])
            try await trellis.waitForOutput("connected to the broker")
            try await Self.flood(broker, count: 120)
            try await trellis.waitForOutput("the state store cannot commit", timeout: .seconds(60))
            let stopping = ContinuousClock.now
            trellis.process.signal(signal)
            // The stop itself is bounded (the store's 4 s of patience); its time is printed, not asserted,
            // since a loaded machine stretches it. The wait below only keeps a hung stop from hanging the test.
            let status = try await trellis.waitForExit(timeout: .seconds(90))
            print("tmpfs stop (signal \(signal)): exited \(status) after \(ContinuousClock.now - stopping)")
            if signal == SIGTERM {
                #expect(status != 0, "unwritten changes make the exit status say so")
                #expect(
                    trellis.output.contains("stopping with messages unacknowledged"), "\(trellis.output.suffix(2000))")
            }

            try mount.remount("size=64m")
            let restarted = try TrellisBinary.start(["run", "--broker", broker.address, "--state", mount.path])
            try await restarted.waitForOutput("connected to the broker")
            try await Self.roundTrip(broker, id: 2)
            #expect(try await restarted.terminate() == 0)
            let numbers = try await Self.storedLines(mount.path)
            print(
                "tmpfs stop (signal \(signal)): 120 lines sent, stopped while full, \(numbers.count) stored after the restart"
            )
            #expect(numbers.count == 120)
            #expect(Set(numbers).count == 120)
        }
    }

    @Test(
        "a state file that is not a database, or damaged, is refused at start in one line naming it, and left as it was",
        arguments: ["garbage", "damaged", "directory"])
    func unusableStateFile(_ kind: String) async throws {
        let state = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: state) }
        let path = state + "/" + SQLiteStore.fileName
        switch kind {
        case "garbage":
            try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
            #expect(FileManager.default.createFile(atPath: path, contents: Data(repeating: 0x41, count: 8192)))
        case "damaged":
            let store = try SQLiteStore(directory: state)
            for index in 0..<50 {
                try await store.recordDeadLetter(
                    reason: "r", topic: "t", payload: Array(repeating: UInt8(index), count: 5000), at: Date())
            }
            try await store.close()
            // Keep the header page, overwrite the pages after it.
            let handle = try #require(FileHandle(forWritingAtPath: path))
            try handle.seek(toOffset: 4096 * 3)
            handle.write(Data(repeating: 0xEE, count: 4096 * 20))
            try handle.close()
            try? FileManager.default.removeItem(atPath: path + "-wal")
            try? FileManager.default.removeItem(atPath: path + "-shm")
        default:
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        }
        let before = try? Data(contentsOf: URL(fileURLWithPath: path))
        // The store `trellis run` opens on an SQLite state, and the line the command prints for its refusal.
        let error = #expect(throws: StoreError.self) { try SQLiteStore(directory: state) }
        #expect(error?.code == .cannotOpen)
        let output = "\(TrellisApplication.failure(of: try #require(error)))"
        #expect(!output.contains("\n"), "one line: \(output)")
        #expect(output.contains(path) && output.contains("does not start"), "\(output)")
        switch kind {
        case "garbage": #expect(output.contains("file is not a database"))
        case "damaged": #expect(output.contains("damaged") || output.contains("malformed"), "\(output)")
        default: #expect(output.contains("unable to open"), "\(output)")
        }
        #expect((try? Data(contentsOf: URL(fileURLWithPath: path))) == before, "the state file was changed")
    }
}
