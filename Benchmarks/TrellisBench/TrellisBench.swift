import ArgumentParser
import Foundation
import TrellisBroker
import TrellisMQTT
import TrellisRelay
import TrellisStore
import TrellisStorePostgres

/// `trellis-bench`: Trellis against a minimal C relay over the same broker, in one run.
@main
struct TrellisBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trellis-bench",
        abstract: "Measure Trellis against a minimal C relay over libmosquitto, through one Mosquitto, in one run.",
        discussion: """
            Starts its own Mosquitto (broker.conf's settings on a free loopback port), builds and runs \
            Benchmarks/baseline/relay.c (which echoes rpi/torpi to rpi/fromrpi and fans presses on p2o/buttons/+/press \
            out to 100 clients) and, beside it on the same broker, Trellis (`trellis run --broker` on the prefixes trl \
            and t2o, 7 plants with readings, 10,000 buttons and 1,000 clients in its state), whose traffic starts once \
            its start's Home Assistant announcement and retained sweep are done. Each figure is measured \
            --rounds times, the two relays one right after the other and the order swapped every round, so a shared \
            machine's drift falls on both alike; the closed loop alternates within a round too, in 10 slices per relay \
            (each opened by 20 requests not counted), its percentiles those of all the slices' requests. It prints the medians for both, the median of the per-round ratios \
            Trellis/baseline and their range; timings depend on the machine, so only ratios from one run compare. \
            Each relay's CPU time per request (user, and user + system, from /proc/<pid>/stat) is measured over the \
            closed loop and the pipelined run with 64 in flight.
            """
    )

    @Flag(help: "A seconds-long run with small counts, to check that everything works.")
    var quick = false

    @Option(help: "Closed-loop requests per QoS and relay (latency), counted in 10 interleaved slices.")
    var closedLoop = 5_000

    @Option(help: "Pipelined requests per QoS and window (throughput).")
    var pipelined = 50_000

    @Option(help: "Button presses for the fan-out figure (each reaches 100 clients).")
    var presses = 1_000

    @Option(help: "Species in Trellis's catalog for the catalog search figure.")
    var species = 50_000

    @Option(help: "Requests between the two resident-memory readings of Trellis.")
    var requests = 1_000_000

    @Option(help: "Times each latency, throughput and fan-out figure is measured, the relays in alternation.")
    var rounds = 5

    @Option(
        help:
            "Load generator of the main table: c (Benchmarks/baseline/loadgen.c) or swift (TrellisMQTT's MQTTClient). Both are always compared once against each relay."
    )
    var loadGenerator: GeneratorKind = .c

    @Option(help: ArgumentHelp("Also write the table as JSON to this file.", valueName: "file"))
    var json: String?

    @Option(
        help: ArgumentHelp(
            "Instead of the C relay comparison: compare one relay on SQLite, one on PostgreSQL and two on PostgreSQL in a $share group (QoS 1 round trips and throughput, press fan-out), with databases created on this PostgreSQL server and dropped after (`make bench-stores` starts a throwaway one).",
            valueName: "postgres-url"))
    var stores: String?

    @Flag(
        help: ArgumentHelp(
            "Instead of the C relay comparison: how a request's cost grows with the state. At each of --scales, a relay on the bench's state grown that many times (buttons, clients, listeners of a button, devices with full logs, species, dead letters): its start until announced to Home Assistant and its peak memory, then the closed-loop p50 and CPU per operation of a plant request, a press, a device log line and a rejected plant request (kept as a dead letter); at the first scale, a press against 10 to 10,000 listeners. SQLite, and PostgreSQL too with --stores URL (`make bench-scaling` starts a throwaway server)."
        ))
    var scaling = false

    @Flag(
        help:
            "With a watcher attached: a client keeps Trellis's stream of decoded traffic on (what `trellis watch` asks for) and reads every event, so the figures are those of a watched relay (docs/watch.md)."
    )
    var watching = false

    @Option(help: ArgumentHelp("With --scaling: the scales, comma-separated.", valueName: "list"))
    var scales = "1,10,100"

    enum GeneratorKind: String, ExpressibleByArgument { case c, swift }

    mutating func run() async throws {
        if quick { (closedLoop, pipelined, presses, requests, species, rounds) = (50, 500, 5, 1_000, 500, 2) }
        guard rounds >= 1 else { throw ValidationError("--rounds must be at least 1") }
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("trellis-bench-\(UUID().uuidString)")
            .path
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: work) }
        Watchdog.start()
        do {
            try await measureAll(work: work)
        } catch {
            Watchdog.killChildren()
            throw error
        }
    }

    func measureAll(work: String) async throws {
        let loadgen = CLoadGenerator(binary: try Contender.compile("loadgen", work: work), work: work)
        let broker = try await BenchBroker.start(in: work)
        defer { broker.kill() }
        if let pid = broker.pid { Watchdog.adopt(pid) }
        let port = broker.address.port
        if scaling {
            let list = scales.split(separator: ",").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
            guard !list.isEmpty, list.allSatisfy({ $0 >= 1 }) else {
                throw ValidationError("--scales takes whole numbers from 1, e.g. 1,10,100")
            }
            var run = ScalingRun(
                port: port, scales: quick ? [1, 2] : list, requests: quick ? 50 : closedLoop / 2,
                postgres: try stores.map { try PostgresURL($0) })
            if quick { run.pressDeliveries = 5_000 }
            try await run.run(work: work)
            print(Machine.describe())
            return
        }
        if let stores {
            let comparison = StoreComparison(
                port: port, loadgen: loadgen, closedLoop: closedLoop, pipelined: pipelined,
                presses: presses, rounds: rounds, server: try PostgresURL(stores))
            print(try await comparison.run(work: work))
            print(Machine.describe())
            return
        }
        var table = BenchTable()
        table.loadGenerator = loadGenerator == .c ? "C loadgen (Benchmarks/baseline/loadgen.c)" : "Swift MQTTClient"
        table.rounds = rounds

        let baseline = try await Contender.baseline(port: port, work: work)
        let trellis = try await Contender.trellis(port: port, work: work, species: species)
        let watcher = watching ? try await BenchWatcher(port: port) : nil
        let runner = RoundRunner(
            port: port, loadgen: loadgen, kind: loadGenerator, closedLoop: closedLoop,
            pipelined: pipelined, presses: presses)
        var baseRounds: [Figures] = [], trellisRounds: [Figures] = []
        for round in 0..<rounds {
            let (base, other) = try await runner.round(
                baseline: baseline, trellis: trellis, baselineFirst: round.isMultiple(of: 2))
            baseRounds.append(base)
            trellisRounds.append(other)
        }
        table.checks.append(
            try await loadCheck(port: port, label: "baseline (C relay)", contender: baseline, loadgen: loadgen))
        table.checks.append(try await loadCheck(port: port, label: "Trellis", contender: trellis, loadgen: loadgen))
        baseline.stop()
        if let watcher { print("watch events received: \(await watcher.stop())") }

        var catalog = try await LoadGenerator.connect(
            port: port, id: "bench-catalog", replyFilters: ["trellis/response/catalog/search"])
        _ = try await catalog.catalogSearches(count: 20)
        let searches = try await catalog.catalogSearches(count: min(closedLoop, 1_000))
        await catalog.client.shutdown()
        var logs = try await LoadGenerator.connect(port: port, id: "bench-logs", replyFilters: ["trellis/logs/+"])
        let ingest = try await logs.logIngest(count: pipelined, window: 512)
        await logs.client.shutdown()
        let before = trellis.residentKiB()
        _ = try await loadgen.run(["\(port)", "req", "0", "\(requests)", "64", trellis.plantPrefix, trellis.replySuffix]
        )
        let after = trellis.residentKiB()
        let peak = trellis.peakKiB()
        trellis.stop()

        for figure in baseRounds[0].keys.sorted() {
            table.add(
                figure, baseline: baseRounds.map { $0[figure] ?? 0 }, trellis: trellisRounds.map { $0[figure] ?? 0 })
        }
        table.add(
            "log ingest, QoS 1, 512 in flight (lines/s; baseline: its QoS 1 receive rate)",
            baseline: [baseRounds.map { $0["QoS 1 pipelined 512 (req/s)"] ?? 0 }.median], trellis: [ingest])
        table.catalogSearch(samples: searches, species: species)
        table.start(
            seconds: Double(trellis.startup.components.seconds) + Double(trellis.startup.components.attoseconds) / 1e18)
        table.memory(peakKiB: peak, beforeKiB: before, afterKiB: after, requests: requests)
        print(table.render(machine: Machine.describe()))
        if let json {
            try table.json(machine: Machine.describe()).write(toFile: json, atomically: true, encoding: .utf8)
        }
    }

    /// QoS 0 with 512 in flight from both load generators against the same relay.
    func loadCheck(port: Int, label: String, contender: Contender, loadgen: CLoadGenerator) async throws
        -> BenchTable.LoadCheck
    {
        var load = try await LoadGenerator.connect(
            port: port, id: "bench-check", replyFilters: ["\(contender.plantPrefix)/fromrpi"])
        let swift = try await load.pipelined(
            count: pipelined, window: 512, qos: .atMostOnce, topic: "\(contender.plantPrefix)/torpi",
            suffix: Array(contender.replySuffix.utf8))
        await load.client.shutdown()
        let c =
            try await loadgen.run([
                "\(port)", "req", "0", "\(pipelined)", "512", contender.plantPrefix, contender.replySuffix
            ])["rate"] ?? 0
        return BenchTable.LoadCheck(contender: label, swiftClient: swift, cLoadgen: c)
    }
}
