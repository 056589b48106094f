import ArgumentParser
import Foundation
import TrellisBroker
import TrellisMQTT
import TrellisRelay
import TrellisStore

/// `trellis-bench`: Trellis against a minimal C relay over the same broker, in one run.
@main
struct TrellisBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trellis-bench",
        abstract: "Measure Trellis against a minimal C relay over libmosquitto, through one Mosquitto, in one run.",
        discussion: """
            Starts its own Mosquitto (broker.conf's settings on a free loopback port), builds and runs \
            Benchmarks/baseline/relay.c (which echoes rpi/torpi to rpi/fromrpi and fans presses out to 100 clients), \
            then Trellis (`trellis run --broker`, 7 plants with readings, 10,000 buttons and 1,000 clients in its \
            state). It prints each figure for both and the ratio Trellis/baseline; timings depend on the machine, \
            so only ratios from one run compare.
            """
    )

    @Flag(help: "A seconds-long run with small counts, to check that everything works.")
    var quick = false

    @Option(help: "Closed-loop requests per QoS (latency).")
    var closedLoop = 5_000

    @Option(help: "Pipelined requests per QoS and window (throughput).")
    var pipelined = 50_000

    @Option(help: "Button presses for the fan-out figure (each reaches 100 clients).")
    var presses = 1_000

    @Option(help: "Species in Trellis's catalog for the catalog search figure.")
    var species = 50_000

    @Option(help: "Requests between the two resident-memory readings of Trellis.")
    var requests = 1_000_000

    @Option(help: "Load generator of the main table: c (Benchmarks/baseline/loadgen.c) or swift (TrellisMQTT's MQTTClient). Both are always compared once against each relay.")
    var loadGenerator: GeneratorKind = .c

    @Option(help: ArgumentHelp("Also write the table as JSON to this file.", valueName: "file"))
    var json: String?

    enum GeneratorKind: String, ExpressibleByArgument { case c, swift }

    mutating func run() async throws {
        if quick { (closedLoop, pipelined, presses, requests, species) = (200, 2_000, 20, 5_000, 2_000) }
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("trellis-bench-\(UUID().uuidString)").path
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
        var table = BenchTable()
        table.loadGenerator = loadGenerator == .c ? "C loadgen (Benchmarks/baseline/loadgen.c)" : "Swift MQTTClient"

        let baseline = try await Contender.baseline(port: port, work: work)
        let echo = "operation:REQ_plantSensorData", answer = "operation:RES_plantSensorData"
        let baseFigures = try await measure(port: port, label: "baseline", suffix: echo, loadgen: loadgen)
        table.checks.append(try await loadCheck(port: port, label: "baseline (C relay)", suffix: echo, loadgen: loadgen))
        baseline.stop()

        let trellis = try await Contender.trellis(port: port, work: work, species: species)
        let trellisFigures = try await measure(port: port, label: "trellis", suffix: answer, loadgen: loadgen)
        var catalog = try await LoadGenerator.connect(port: port, id: "bench-catalog", replyFilters: ["trellis/response/catalog/search"])
        _ = try await catalog.catalogSearches(count: 20)
        let searches = try await catalog.catalogSearches(count: min(closedLoop, 1_000))
        await catalog.client.shutdown()
        var logs = try await LoadGenerator.connect(port: port, id: "bench-logs", replyFilters: ["trellis/logs/+"])
        let ingest = try await logs.logIngest(count: pipelined, window: 512)
        await logs.client.shutdown()
        table.checks.append(try await loadCheck(port: port, label: "Trellis", suffix: answer, loadgen: loadgen))
        let before = trellis.residentKiB()
        _ = try await loadgen.run(["\(port)", "req", "0", "\(requests)", "64", answer])
        let after = trellis.residentKiB()
        let peak = trellis.peakKiB()
        trellis.stop()

        for (key, value) in baseFigures.sorted(by: { $0.key < $1.key }) {
            table.add(key, baseline: value, trellis: trellisFigures[key] ?? 0)
        }
        table.add("log ingest, QoS 1, 512 in flight (lines/s; baseline: its QoS 1 receive rate)",
                  baseline: baseFigures["QoS 1 pipelined 512 (req/s)"] ?? 0, trellis: ingest)
        table.catalogSearch(samples: searches, species: species)
        table.memory(peakKiB: peak, beforeKiB: before, afterKiB: after, requests: requests)
        print(table.render(machine: Machine.describe()))
        if let json { try table.json(machine: Machine.describe()).write(toFile: json, atomically: true, encoding: .utf8) }
    }

    /// QoS 0 with 512 in flight from both load generators against the same relay.
    func loadCheck(port: Int, label: String, suffix: String, loadgen: CLoadGenerator) async throws -> BenchTable.LoadCheck {
        var load = try await LoadGenerator.connect(port: port, id: "bench-check", replyFilters: ["rpi/fromrpi"])
        let swift = try await load.pipelined(count: pipelined, window: 512, qos: .atMostOnce, suffix: Array(suffix.utf8))
        await load.client.shutdown()
        let c = try await loadgen.run(["\(port)", "req", "0", "\(pipelined)", "512", suffix])["rate"] ?? 0
        return BenchTable.LoadCheck(contender: label, swiftClient: swift, cLoadgen: c)
    }

    /// Every latency and throughput figure of one contender, by name.
    func measure(port: Int, label: String, suffix: String, loadgen: CLoadGenerator) async throws -> Figures {
        var figures: Figures = [:]
        for qos in [QoS.atMostOnce, .atLeastOnce] {
            let name = "QoS \(qos.rawValue)"
            switch loadGenerator {
            case .swift:
                var load = try await LoadGenerator.connect(port: port, id: "bench-\(label)-\(qos.rawValue)", replyFilters: ["rpi/fromrpi"])
                _ = try await load.closedLoop(count: min(200, closedLoop), qos: qos, suffix: Array(suffix.utf8))
                let samples = try await load.closedLoop(count: closedLoop, qos: qos, suffix: Array(suffix.utf8))
                figures["\(name) latency p50 (µs)"] = samples.percentile(0.5)
                figures["\(name) latency p99 (µs)"] = samples.percentile(0.99)
                figures["\(name) latency max (µs)"] = samples.max() ?? 0
                for window in [64, 512] {
                    figures["\(name) pipelined \(window) (req/s)"] = try await load.pipelined(count: pipelined, window: window, qos: qos,
                                                                                                suffix: Array(suffix.utf8))
                }
                await load.client.shutdown()
            case .c:
                _ = try await loadgen.run(["\(port)", "req", "\(qos.rawValue)", "\(min(200, closedLoop))", "1", suffix])
                let closed = try await loadgen.run(["\(port)", "req", "\(qos.rawValue)", "\(closedLoop)", "1", suffix])
                figures["\(name) latency p50 (µs)"] = closed["p50"]
                figures["\(name) latency p99 (µs)"] = closed["p99"]
                figures["\(name) latency max (µs)"] = closed["max"]
                for window in [64, 512] {
                    figures["\(name) pipelined \(window) (req/s)"] =
                        try await loadgen.run(["\(port)", "req", "\(qos.rawValue)", "\(pipelined)", "\(window)", suffix])["rate"]
                }
            }
        }
        let pressesPerSecond: Double
        switch loadGenerator {
        case .swift:
            var fan = try await LoadGenerator.connect(port: port, id: "bench-\(label)-fan", replyFilters: ["p2o/clients/+/button-press"])
            pressesPerSecond = try await fan.fanOut(presses: presses, fanout: 100, window: 4)
            await fan.client.shutdown()
        case .c:
            pressesPerSecond = try await loadgen.run(["\(port)", "fan", "1", "\(presses)", "4"])["rate"] ?? 0
        }
        figures["fan-out presses/s"] = pressesPerSecond
        figures["fan-out deliveries/s"] = pressesPerSecond * 100
        return figures
    }
}
