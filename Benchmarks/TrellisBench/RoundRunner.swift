import TrellisMQTT

/// One round of the latency, throughput and fan-out figures: each measurement is made on both
/// relays one right after the other, so that whatever else the machine is doing weighs on both.
struct RoundRunner {
    let port: Int
    let loadgen: CLoadGenerator
    let kind: TrellisBench.GeneratorKind
    let closedLoop: Int
    let pipelined: Int
    let presses: Int
    /// Whether a pipelined measurement also reports its p50 (C load generator only): the store
    /// comparison's latency target reads it; the main table has no target for it.
    var pipelinedLatency = false
    /// Whether the closed loop and the pipelined run with 64 in flight also report the relay's CPU
    /// per request (the main table; not the store comparison, whose share group is several processes).
    var cpuFigures = true

    /// What one measurement drives.
    enum Measurement {
        case closedLoop(QoS)
        case pipelined(QoS, window: Int)
        case fanOut
    }

    static let measurements: [Measurement] =
        [QoS.atMostOnce, .atLeastOnce].flatMap { qos in
            [.closedLoop(qos), .pipelined(qos, window: 64), .pipelined(qos, window: 512)]
        } + [.fanOut]

    /// Every figure of one round, for the baseline and for Trellis; `baselineFirst` says which of
    /// the two goes first in each pair of measurements.
    func round(baseline: Contender, trellis: Contender, baselineFirst: Bool) async throws -> (
        baseline: Figures, trellis: Figures
    ) {
        var base: Figures = [:], other: Figures = [:]
        for measurement in Self.measurements {
            if case let .closedLoop(qos) = measurement {
                let figures = try await closedLoop(qos, on: baselineFirst ? [baseline, trellis] : [trellis, baseline])
                base.merge(figures[baselineFirst ? 0 : 1]) { $1 }
                other.merge(figures[baselineFirst ? 1 : 0]) { $1 }
                continue
            }
            for contender in baselineFirst ? [baseline, trellis] : [trellis, baseline] {
                let figures = try await measure(measurement, on: contender)
                if contender.name == baseline.name {
                    base.merge(figures) { $1 }
                } else {
                    other.merge(figures) { $1 }
                }
            }
        }
        return (base, other)
    }

    /// One measurement on one relay, by the load generator chosen for the main table. A round's
    /// closed loops interleave the relays instead (``closedLoop(_:on:)``).
    func measure(_ measurement: Measurement, on contender: Contender) async throws -> Figures {
        let requestTopic = "\(contender.plantPrefix)/torpi", suffix = contender.replySuffix
        switch measurement {
        case let .closedLoop(qos):
            // Interleaved with itself alone: the same slices and warm-ups as beside another relay.
            return try await closedLoop(qos, on: [contender])[0]

        case let .pipelined(qos, window):
            let name = "QoS \(qos.rawValue) pipelined \(window)"
            let cpu = contender.cpuTime()
            var figures: Figures
            switch kind {
            case .swift:
                var load = try await LoadGenerator.connect(
                    port: port, id: "bench-pipelined", replyFilters: ["\(contender.plantPrefix)/fromrpi"])
                let rate = try await load.pipelined(
                    count: pipelined, window: window, qos: qos, topic: requestTopic, suffix: Array(suffix.utf8))
                await load.client.shutdown()
                figures = ["\(name) (req/s)": rate]
            case .c:
                // The C load generator also times each request under load: its median is the
                // pipelined p50 (mostly the time spent queued behind the others in flight).
                let run = try await loadgen.run([
                    "\(port)", "req", "\(qos.rawValue)", "\(pipelined)", "\(window)", contender.plantPrefix, suffix
                ])
                figures = ["\(name) (req/s)": run["rate"] ?? 0]
                if pipelinedLatency { figures["\(name) latency p50 (µs)"] = run["p50"] ?? 0 }
            }
            if window == 64 && cpuFigures {
                figures.merge(Self.cpuPerRequest(of: contender, since: cpu, requests: pipelined, label: name)) { $1 }
            }
            return figures

        case .fanOut:
            let pressesPerSecond: Double
            switch kind {
            case .swift:
                var fan = try await LoadGenerator.connect(
                    port: port, id: "bench-fan", replyFilters: ["\(contender.buttonPrefix)/clients/+/button-press"])
                pressesPerSecond = try await fan.fanOut(
                    presses: presses, fanout: 100, window: 4, topic: "\(contender.buttonPrefix)/buttons/b0/press")
                await fan.client.shutdown()
            case .c:
                pressesPerSecond =
                    try await loadgen.run(["\(port)", "fan", "1", "\(presses)", "4", contender.buttonPrefix])["rate"]
                    ?? 0
            }
            return ["fan-out presses/s": pressesPerSecond, "fan-out deliveries/s": pressesPerSecond * 100]
        }
    }

    /// The relay's CPU time per request since `start`, user and user + system, in µs (`/proc/<pid>/stat`,
    /// counted in clock ticks: over a few thousand requests a C relay's few µs of user time are a tick or two).
    static func cpuPerRequest(
        of contender: Contender, since start: (user: Int, system: Int), requests: Int,
        label: String
    ) -> Figures {
        let end = contender.cpuTime()
        let user = Double(end.user - start.user) / 1_000 / Double(max(1, requests))
        let system = Double(end.system - start.system) / 1_000 / Double(max(1, requests))
        return [
            "\(label) CPU per request, user (µs)": user, "\(label) CPU per request, user + system (µs)": user + system
        ]
    }
}
