import Foundation

/// The benchmark's results: each figure for the baseline and for Trellis, their ratio, and the target.
///
/// A figure measured in several rounds shows the median of each relay, and as its ratio the median
/// of the per-round ratios (each round measures the two relays one right after the other), with
/// the lowest and highest of those ratios beside it.
struct BenchTable {
    struct Row: Codable {
        var figure: String
        var baseline: Double?
        var trellis: Double
        var ratio: Double?
        /// The lowest and highest per-round ratio, when there were several rounds.
        var ratioRange: [Double]?
        var target: String
        var met: Bool
        /// Every round's value, in order.
        var baselineRounds: [Double]?
        var trellisRounds: [Double]?
    }

    /// The same pipelined figure from both load generators, to show which one limits the figures.
    struct LoadCheck: Codable {
        var contender: String
        var swiftClient: Double
        var cLoadgen: Double
    }

    private(set) var rows: [Row] = []
    var checks: [LoadCheck] = []
    var loadGenerator = ""
    var rounds = 1

    /// A figure with its values in each round, paired: `baseline[i]` and `trellis[i]` were measured together.
    mutating func add(_ figure: String, baseline: [Double], trellis: [Double]) {
        // A round whose baseline is 0 (a CPU figure under one clock tick) has no ratio.
        let ratios = zip(baseline, trellis).compactMap { $0 > 0 ? $1 / $0 : nil }
        let ratio = ratios.isEmpty ? 0 : ratios.median
        let target: String, met: Bool
        if figure.contains("latency p50") {
            (target, met) = ("≤ 1.1×", ratio <= 1.1)
        } else if figure.contains("latency p99") {
            (target, met) = ("≤ 1.5×", ratio <= 1.5)
        } else if figure.contains("latency max") || figure.contains("log ingest") || figure.contains("CPU per request")
        {
            (target, met) = ("", true)
        } else if figure.contains("fan-out") {
            (target, met) = ("≥ 0.8×", ratio >= 0.8)
        } else {
            (target, met) = ("≥ 0.9×", ratio >= 0.9)
        }
        rows.append(
            Row(
                figure: figure, baseline: baseline.median, trellis: trellis.median, ratio: ratios.isEmpty ? nil : ratio,
                ratioRange: ratios.count > 1 ? [ratios.min() ?? 0, ratios.max() ?? 0] : nil, target: target, met: met,
                baselineRounds: baseline.count > 1 ? baseline : nil, trellisRounds: trellis.count > 1 ? trellis : nil))
    }

    /// Round trips of `catalog/search` with all three filters and a name; the target is absolute.
    mutating func catalogSearch(samples: [Double], species: Int) {
        let p50 = samples.percentile(0.5), p99 = samples.percentile(0.99)
        rows.append(
            Row(
                figure: "catalog/search round trip p50, \(species) species, all filters and a name (µs)", baseline: nil,
                trellis: p50, ratio: nil, target: "< 10 ms", met: p50 < 10_000))
        rows.append(
            Row(
                figure: "catalog/search round trip p99 (µs)", baseline: nil, trellis: p99, ratio: nil, target: "",
                met: true))
    }

    /// How long Trellis took from its start until its Home Assistant announcement and retained sweep
    /// were done, before which no traffic is measured.
    mutating func start(seconds: Double) {
        rows.append(
            Row(
                figure: "Trellis start until announced and swept (s)", baseline: nil, trellis: seconds, ratio: nil,
                target: "", met: true))
    }

    mutating func memory(peakKiB: Int, beforeKiB: Int, afterKiB: Int, requests: Int) {
        rows.append(
            Row(
                figure: "Trellis peak RSS (MB)", baseline: nil, trellis: Double(peakKiB) / 1024, ratio: nil,
                target: "≤ 40 MB", met: peakKiB <= 40 * 1024))
        let growth = Double(afterKiB - beforeKiB) / 1024
        rows.append(
            Row(
                figure: "Trellis RSS before \(requests) requests (MB)", baseline: nil,
                trellis: Double(beforeKiB) / 1024,
                ratio: nil, target: "", met: true))
        rows.append(
            Row(
                figure: "Trellis RSS after \(requests) requests (MB)", baseline: nil, trellis: Double(afterKiB) / 1024,
                ratio: nil, target: "", met: true))
        rows.append(
            Row(
                figure: "Trellis RSS growth over \(requests) requests (MB)", baseline: nil, trellis: growth,
                ratio: nil, target: "no growth (< 1 MB)", met: growth < 1))
    }

    func render(machine: String) -> String {
        func number(_ value: Double?) -> String {
            guard let value else { return "" }
            return value >= 100 ? String(Int(value.rounded())) : String(format: "%.2f", value)
        }
        func ratio(_ row: Row) -> String {
            guard let ratio = row.ratio else { return "" }
            guard let range = row.ratioRange else { return String(format: "%.2f×", ratio) }
            return String(format: "%.2f× (%.2f–%.2f)", ratio, range[0], range[1])
        }
        var lines = [
            "| figure | baseline (C) | Trellis | Trellis/baseline | target | met |", "|---|---|---|---|---|---|"
        ]
        for row in rows {
            lines.append(
                "| \(row.figure) | \(number(row.baseline)) | \(number(row.trellis)) | \(ratio(row)) | \(row.target) | \(row.target.isEmpty ? "" : (row.met ? "yes" : "no")) |"
            )
        }
        if !checks.isEmpty {
            lines += [
                "", "| load generator check: QoS 0, 512 in flight (req/s) | Swift MQTTClient | C loadgen | Swift/C |",
                "|---|---|---|---|"
            ]
            for check in checks {
                lines.append(
                    "| \(check.contender) | \(number(check.swiftClient)) | \(number(check.cLoadgen)) | \(String(format: "%.2f×", check.swiftClient / max(check.cLoadgen, 1))) |"
                )
            }
        }
        let medians =
            rounds > 1
            ? "Latency, throughput and fan-out: medians of \(rounds) rounds, the relays in alternation; ratio: median of the per-round ratios (lowest–highest). "
            : ""
        return lines.joined(separator: "\n") + "\n\n" + medians + "Load generator of the main table: \(loadGenerator). "
            + machine
    }

    func json(machine: String) throws -> String {
        struct Document: Codable {
            var machine: String; var loadGenerator: String; var rounds: Int; var rows: [Row];
            var loadGeneratorCheck: [LoadCheck]
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return String(
            decoding: try encoder.encode(
                Document(
                    machine: machine, loadGenerator: loadGenerator, rounds: rounds, rows: rows,
                    loadGeneratorCheck: checks)), as: UTF8.self)
    }
}

/// What the figures were measured on.
enum Machine {
    static func describe() -> String {
        let cpu =
            (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8))?
            .split(separator: "\n").first { $0.hasPrefix("model name") }?
            .split(separator: ":").last?.trimmingCharacters(in: .whitespaces) ?? "unknown CPU"
        let kernel =
            (try? String(contentsOfFile: "/proc/sys/kernel/osrelease", encoding: .utf8))?
            .trimmingCharacters(in: .whitespacesAndNewlines) ?? "unknown kernel"
        return "Machine: nproc \(ProcessInfo.processInfo.activeProcessorCount), \(cpu), Linux \(kernel)."
    }
}
