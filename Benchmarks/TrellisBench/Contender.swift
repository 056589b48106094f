import Foundation
import TrellisBroker
import TrellisMQTT
import TrellisRelay
import TrellisStore
import TrellisStorePostgres
import TrellisStoreSQLite

/// The benchmark's Mosquitto: broker.conf's settings on a free loopback port, without its accounts.
enum BenchBroker {
    static func start(in work: String) async throws -> MosquittoProcess {
        guard let port = PortProbe.freeLoopbackPort() else { throw BenchError("no free loopback port") }
        let config = EmbeddedBrokerConfig.text
            .replacingOccurrences(of: "listener 1883 127.0.0.1", with: "listener \(port) 127.0.0.1")
            .replacingOccurrences(of: "persistence_location trellis-state/", with: "persistence_location \(work)/")
            // Without accounts: both relays and the load run anonymously on the one broker, which
            // compares the relays alike (the broker's ACL checks cost each of them the same).
            .replacingOccurrences(of: "password_file trellis-state/passwd\n", with: "")
            .replacingOccurrences(of: "acl_file trellis-state/acl\n", with: "")
        let path = work + "/broker.conf"
        try config.write(toFile: path, atomically: true, encoding: .utf8)
        let broker = try MosquittoProcess(configPath: path, logPath: work + "/mosquitto.log")
        try await broker.start()
        return broker
    }
}

/// A relay under test, run as a child process. Both relays run side by side on the one broker, each
/// on its own topics, so the benchmark can measure them in alternation: the baseline on the plant
/// tracker's standard `rpi` and `p2o` prefixes, Trellis on `trl` and `t2o` (names of the same length,
/// so the broker's work per message is the same).
struct Contender {
    let name: String
    let process: ChildProcess
    /// Further relays of the same share group, answering on the same topics (the store comparison).
    var companions: [ChildProcess] = []
    let output: String
    /// Requests go to `<plantPrefix>/torpi`, replies come on `<plantPrefix>/fromrpi`.
    let plantPrefix: String
    /// Presses go to `<buttonPrefix>/buttons/b0/press`, deliveries come on `<buttonPrefix>/clients/+/button-press`.
    let buttonPrefix: String
    /// How every reply of this contender to a plant request ends.
    let replySuffix: String
    /// From starting the relay until it printed its ready line (polled every 20 ms).
    var startup: Duration = .zero

    /// Compiles one of the C programs kept beside the benchmark (`Benchmarks/baseline/NAME.c`) into `work`.
    static func compile(_ name: String, work: String) throws -> String {
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("baseline/\(name).c").path
        let binary = work + "/" + name
        let compile = try ChildProcess(
            path: "/usr/bin/cc", arguments: ["-O2", "-o", binary, source, "-lmosquitto"],
            outputPath: work + "/cc-\(name).log")
        compile.waitUntilExit()
        guard compile.terminationStatus == 0 else {
            throw BenchError("cc \(name).c failed: \(read(work + "/cc-\(name).log"))")
        }
        return binary
    }

    /// Builds and starts the C baseline.
    static func baseline(port: Int, work: String) async throws -> Contender {
        let binary = try compile("relay", work: work)
        let contender = Contender(
            name: "baseline",
            process: try ChildProcess(path: binary, arguments: ["\(port)", "100"], outputPath: work + "/relay.log"),
            output: work + "/relay.log", plantPrefix: "rpi", buttonPrefix: "p2o",
            replySuffix: "operation:REQ_plantSensorData")
        Watchdog.adopt(contender.process.pid)
        try await contender.waitFor("connected")
        return contender
    }

    /// Seeds Trellis's state through the store (10,000 buttons with a press each, 1,000 clients online),
    /// starts `trellis run --broker` on the `trl` and `t2o` prefixes with a plants file of 7 plants, gives
    /// every plant's sensor a reading by publishing it, and registers 100 clients (c0…c99) for button b0
    /// by traffic. The catalog gets
    /// `species` generated species. The spam guard is opened up for the single load sender (a limit
    /// it never reaches, over a window of 0.1 s, so the guard keeps few timestamps for that sender),
    /// and so are the per-client rates of JSON requests and device messages.
    /// Its traffic starts once the start's Home Assistant announcement and retained sweep are done:
    /// measured during them, a request shares the relay and the broker with some 20,000 retained
    /// configs (two per button) published and read back, a cost of the start and not of a request
    /// (the table gives its time; the scaling table times it against the state).
    static func trellis(port: Int, work: String, species: Int) async throws -> Contender {
        try await trellis(
            port: port, work: work, species: species, setup: .sqlite, readyLine: announced, readyTimeout: .seconds(300))
    }

    /// What a relay logs once its start's Home Assistant announcement and retained sweep are done.
    static let announced = "swept the retained topics"
    /// What a relay logs instead when that sweep fails.
    static let sweepFailed = "could not sweep stale retained topics"

    /// 1,000 clients online, 10,000 buttons pressed once, and `species` catalog species.
    static func seed(_ store: SQLiteStore, species: Int) async throws {
        let now = Date()
        for index in 0..<1_000 { try await store.setClientStatus(client: "c\(index)", online: true, at: now) }
        for index in 0..<10_000 { _ = try await store.recordPress(button: "b\(index)", at: now, historyLimit: 20) }
        if species > 0 { try await store.upsertSpecies(BenchCatalog.species(count: species)) }
    }

    /// Where a Trellis contender keeps its state and how many relays answer for it.
    enum StoreSetup {
        /// One relay on SQLite in its state directory.
        case sqlite
        /// `relays` relays on the PostgreSQL database at `url`, in one share group when more than one.
        case postgres(url: String, relays: Int)
        /// One relay on a state written beforehand: the SQLite directory `state-<name>` in the work
        /// directory, or the PostgreSQL database at the URL.
        case prepared(postgresURL: String?)
    }

    /// Like ``trellis(port:work:species:)``, with the state in `setup`, on the prefixes given, named `name`.
    /// `readyLine` is the log line each relay is waited for before its traffic starts (at most `readyTimeout`).
    static func trellis(
        port: Int, work: String, species: Int, setup: StoreSetup, name: String = "trellis",
        prefixes: (plant: String, buttons: String) = ("trl", "t2o"), spamWindow: String = "0.1",
        readyLine: String = "connected to the broker", readyTimeout: Duration = .seconds(30)
    ) async throws -> Contender {
        let state = work + "/state-\(name)"
        var storeArguments: [String] = []
        var relayCount = 1
        switch setup {
        case .sqlite:
            let store = try SQLiteStore(directory: state)
            try await seed(store, species: species)
            try await store.close()
        case let .postgres(url, relays):
            // The same rows, made in SQLite and copied over in one transaction (as `trellis store copy` does).
            let scratch = try SQLiteStore.inMemory()
            try await seed(scratch, species: species)
            let dump = try await scratch.exportState()
            try await scratch.close()
            let store = try await PostgresStore.connect(try PostgresURL(url), owner: "bench-seed")
            try await store.importState(dump, replacing: true)
            try await store.close()
            storeArguments = ["--store", url]
            relayCount = relays
        case let .prepared(url):
            if let url { storeArguments = ["--store", url] }
        }
        let sensors = (0..<7).map { "0x\(String(0x30 + $0, radix: 16))" }
        let plantsFile = work + "/plants-\(name).txt"
        try sensors.enumerated().map { "Plant\($0.offset),\($0.element)\n" }.joined()
            .write(toFile: plantsFile, atomically: true, encoding: .utf8)

        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
            .deletingLastPathComponent().appendingPathComponent("trellis").path
        let (plant, buttons) = prefixes
        // The per-client rates are opened up as the spam guard is: the load comes from one client (and
        // its log lines from 100 devices), and each message still pays the limiter's check.
        for key in [
            "TRELLIS_LIMITS_REQUESTS_PER_SECOND", "TRELLIS_LIMITS_REQUESTS_BURST",
            "TRELLIS_LIMITS_DEVICE_MESSAGES_PER_SECOND", "TRELLIS_LIMITS_DEVICE_MESSAGES_BURST"
        ] {
            setenv(key, "1000000000", 1)
        }
        func relay(_ index: Int) throws -> ChildProcess {
            var arguments =
                [
                    "run", "--broker", "mqtt://127.0.0.1:\(port)", "--state", index == 0 ? state : state + "-\(index)",
                    "--plants-file", plantsFile,
                    "--plant-prefix", plant, "--plant-dialect", "lossless", "--button-prefix", buttons,
                    "--spam-limit", "1000000000", "--spam-window", spamWindow, "--stats-interval", "3600",
                    "--log-level", "info",
                    "--client-id", "\(name)-\(index)"
                ] + storeArguments
            if relayCount > 1 { arguments += ["--share", name] }
            let process = try ChildProcess(
                path: binary, arguments: arguments, outputPath: work + "/\(name)-\(index).log")
            Watchdog.adopt(process.pid)
            return process
        }
        let spawned = ContinuousClock.now
        var contender = Contender(
            name: name, process: try relay(0), output: work + "/\(name)-0.log",
            plantPrefix: plant, buttonPrefix: buttons, replySuffix: "operation:RES_plantSensorData")
        try await contender.waitFor(readyLine, timeout: readyTimeout)
        contender.startup = ContinuousClock.now - spawned
        for index in 1..<relayCount {
            let companion = try relay(index)
            contender.companions.append(companion)
            try await Self.waitFor(readyLine, in: work + "/\(name)-\(index).log", of: companion, timeout: readyTimeout)
        }

        var setup = try await LoadGenerator.connect(
            port: port, id: "bench-setup",
            replyFilters: ["\(plant)/fromrpi", "\(buttons)/clients/+/register-response"])
        for sensor in sensors {
            try await setup.client.publishAndWait(
                topic: "\(plant)/sensors/\(sensor)", payload: Array(#"{"moisture":5,"temperature":70.5}"#.utf8),
                qos: .atLeastOnce)
        }
        for attempt in 0..<100 {
            try setup.client.publish(
                topic: "\(plant)/torpi", payload: LoadGenerator.request(attempt), qos: .atLeastOnce)
            var reply: MQTTMessage
            repeat { reply = try await setup.next() } while reply.topic != "\(plant)/fromrpi"
            let text = reply.text ?? ""
            if text.components(separatedBy: #""moisture"%3A5"#).count == 8 { break }
            guard attempt < 99 else { throw BenchError("the 7 plants never showed their readings: \(text)") }
            try await Task.sleep(for: .milliseconds(50))
        }
        for index in 0..<100 {
            try setup.client.publish(
                topic: "\(buttons)/clients/c\(index)/status", payload: Array("online".utf8), qos: .atLeastOnce,
                retain: true)
            try setup.client.publish(
                topic: "\(buttons)/clients/c\(index)/register", payload: Array("b0".utf8), qos: .atLeastOnce)
        }
        var registered = Set<String>()
        while registered.count < 100 {
            let reply = try await setup.next()
            if reply.topic.hasSuffix("/register-response") { registered.insert(reply.topic) }
        }
        await setup.client.shutdown()
        return contender
    }

    func waitFor(_ text: String, timeout: Duration = .seconds(30)) async throws {
        try await Self.waitFor(text, in: output, of: process, timeout: timeout)
    }

    /// Waits until the log at `path` of `process` holds `text`; fails when the process ends, the
    /// time is up, or the log says the start's sweep failed (after which it never logs ``announced``).
    static func waitFor(_ text: String, in path: String, of process: ChildProcess, timeout: Duration) async throws {
        let deadline = ContinuousClock.now + timeout
        while true {
            let log = read(path)
            if log.contains(text) { return }
            guard ContinuousClock.now < deadline, process.isRunning, !log.contains(sweepFailed) else {
                throw BenchError("never printed '\(text)': \(log)")
            }
            Watchdog.tick() // a long start is progress of its own
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    func waitForOnline(port: Int) async throws {
        var watcher = try await LoadGenerator.connect(port: port, id: "bench-watch", replyFilters: ["trellis/status"])
        while let message = await watcher.replies.next(), message.text != "online" {}
        await watcher.client.shutdown()
    }

    func residentKiB() -> Int { Self.statusField("VmRSS", of: process.pid) }

    /// The CPU time the relay has used, user and system, over all its threads (those ended too), in
    /// nanoseconds: `/proc/<pid>/stat`'s utime and stime, counted in clock ticks (10 ms on most
    /// systems), so a figure wants enough operations to span many ticks.
    func cpuNanoseconds() -> Int {
        let (user, system) = cpuTime()
        return user + system
    }

    /// The user and the system CPU time the relay has used, apart, in nanoseconds (see ``cpuNanoseconds()``).
    func cpuTime() -> (user: Int, system: Int) {
        let stat = Self.read("/proc/\(process.pid)/stat")
        // The fields after the command name, which is in parentheses and may hold spaces.
        guard let close = stat.lastIndex(of: ")") else { return (0, 0) }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Int(fields[11]), let system = Int(fields[12]) else { return (0, 0) }
        let tick = 1_000_000_000 / sysconf(Int32(_SC_CLK_TCK))
        return (user * tick, system * tick)
    }

    func peakKiB() -> Int { Self.statusField("VmHWM", of: process.pid) }

    func stop() {
        for relay in [process] + companions {
            relay.signal(SIGTERM)
            relay.waitUntilExit()
            Watchdog.release(relay.pid)
        }
    }

    static func read(_ path: String) -> String { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }

    static func statusField(_ field: String, of pid: Int32) -> Int {
        let line = read("/proc/\(pid)/status").split(separator: "\n").first { $0.hasPrefix(field + ":") }
        return line.flatMap { Int($0.split(whereSeparator: { $0 == " " || $0 == "\t" })[1]) } ?? 0
    }
}
