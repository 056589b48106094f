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

    @Option(help: "Requests between the two resident-memory readings of Trellis.")
    var requests = 1_000_000

    @Option(help: ArgumentHelp("Also write the table as JSON to this file.", valueName: "file"))
    var json: String?

    mutating func run() async throws {
        if quick { (closedLoop, pipelined, presses, requests) = (200, 2_000, 20, 5_000) }
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("trellis-bench-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: work) }

        let broker = try await BenchBroker.start(in: work)
        defer { broker.kill() }
        var table = BenchTable()

        let baseline = try await Contender.baseline(port: broker.address.port, work: work)
        let baseFigures = try await measure(port: broker.address.port, label: "baseline")
        baseline.stop()

        let trellis = try await Contender.trellis(port: broker.address.port, work: work)
        let trellisFigures = try await measure(port: broker.address.port, label: "trellis")
        let before = trellis.residentKiB()
        var soak = try await LoadGenerator.connect(port: broker.address.port, id: "bench-soak", replyFilters: ["rpi/fromrpi"])
        _ = try await soak.pipelined(count: requests, window: 64, qos: .atMostOnce)
        await soak.client.shutdown()
        let after = trellis.residentKiB()
        let peak = trellis.peakKiB()
        trellis.stop()

        for (key, value) in baseFigures.sorted(by: { $0.key < $1.key }) {
            table.add(key, baseline: value, trellis: trellisFigures[key] ?? 0)
        }
        table.memory(peakKiB: peak, beforeKiB: before, afterKiB: after, requests: requests)
        print(table.render(machine: Machine.describe()))
        if let json { try table.json(machine: Machine.describe()).write(toFile: json, atomically: true, encoding: .utf8) }
    }

    /// Every latency and throughput figure of one contender, by name.
    func measure(port: Int, label: String) async throws -> [String: Double] {
        var figures: [String: Double] = [:]
        for qos in [QoS.atMostOnce, .atLeastOnce] {
            var load = try await LoadGenerator.connect(port: port, id: "bench-\(label)-\(qos.rawValue)", replyFilters: ["rpi/fromrpi"])
            _ = try await load.closedLoop(count: min(200, closedLoop), qos: qos)
            let samples = try await load.closedLoop(count: closedLoop, qos: qos)
            figures["QoS \(qos.rawValue) latency p50 (µs)"] = samples.percentile(0.5)
            figures["QoS \(qos.rawValue) latency p99 (µs)"] = samples.percentile(0.99)
            figures["QoS \(qos.rawValue) latency max (µs)"] = samples.max() ?? 0
            for window in [64, 512] {
                figures["QoS \(qos.rawValue) pipelined \(window) (req/s)"] = try await load.pipelined(count: pipelined, window: window, qos: qos)
            }
            await load.client.shutdown()
        }
        var fan = try await LoadGenerator.connect(port: port, id: "bench-\(label)-fan", replyFilters: ["p2o/clients/+/button-press"])
        let pressesPerSecond = try await fan.fanOut(presses: presses, fanout: 100, window: 4)
        figures["fan-out presses/s"] = pressesPerSecond
        figures["fan-out deliveries/s"] = pressesPerSecond * 100
        await fan.client.shutdown()
        return figures
    }
}
