import Foundation

/// The benchmark's results: each figure for the baseline and for Trellis, their ratio, and the target.
struct BenchTable {
    struct Row: Codable {
        var figure: String
        var baseline: Double?
        var trellis: Double
        var ratio: Double?
        var target: String
        var met: Bool
    }

    private(set) var rows: [Row] = []

    mutating func add(_ figure: String, baseline: Double, trellis: Double) {
        let ratio = baseline > 0 ? trellis / baseline : 0
        let target: String, met: Bool
        if figure.contains("latency p50") { (target, met) = ("≤ 1.1×", ratio <= 1.1) }
        else if figure.contains("latency p99") { (target, met) = ("≤ 1.5×", ratio <= 1.5) }
        else if figure.contains("latency max") { (target, met) = ("", true) }
        else if figure.contains("fan-out") { (target, met) = ("≥ 0.8×", ratio >= 0.8) }
        else { (target, met) = ("≥ 0.9×", ratio >= 0.9) }
        rows.append(Row(figure: figure, baseline: baseline, trellis: trellis, ratio: ratio, target: target, met: met))
    }

    mutating func memory(peakKiB: Int, beforeKiB: Int, afterKiB: Int, requests: Int) {
        rows.append(Row(figure: "Trellis peak RSS (MB)", baseline: nil, trellis: Double(peakKiB) / 1024, ratio: nil,
                        target: "≤ 40 MB", met: peakKiB <= 40 * 1024))
        let growth = Double(afterKiB - beforeKiB) / 1024
        rows.append(Row(figure: "Trellis RSS growth over \(requests) requests (MB)", baseline: nil, trellis: growth,
                        ratio: nil, target: "no growth (< 1 MB)", met: growth < 1))
    }

    func render(machine: String) -> String {
        func number(_ value: Double?) -> String {
            guard let value else { return "" }
            return value >= 100 ? String(Int(value.rounded())) : String(format: "%.2f", value)
        }
        var lines = ["| figure | baseline (C) | Trellis | Trellis/baseline | target | met |", "|---|---|---|---|---|---|"]
        for row in rows {
            lines.append("| \(row.figure) | \(number(row.baseline)) | \(number(row.trellis)) | \(row.ratio.map { String(format: "%.2f×", $0) } ?? "") | \(row.target) | \(row.target.isEmpty ? "" : (row.met ? "yes" : "no")) |")
        }
        return lines.joined(separator: "\n") + "\n\n" + machine
    }

    func json(machine: String) throws -> String {
        struct Document: Codable { var machine: String; var rows: [Row] }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return String(decoding: try encoder.encode(Document(machine: machine, rows: rows)), as: UTF8.self)
    }
}

/// What the figures were measured on.
enum Machine {
    static func describe() -> String {
        let cpu = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8))?
            .split(separator: "\n").first { $0.hasPrefix("model name") }?
            .split(separator: ":").last?.trimmingCharacters(in: .whitespaces) ?? "unknown CPU"
        let kernel = (try? String(contentsOfFile: "/proc/sys/kernel/osrelease", encoding: .utf8))?
            .trimmingCharacters(in: .whitespacesAndNewlines) ?? "unknown kernel"
        return "\(ProcessInfo.processInfo.activeProcessorCount) cores, \(cpu), Linux \(kernel)"
    }
}
