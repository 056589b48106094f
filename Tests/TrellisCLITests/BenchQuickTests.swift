import Foundation
import Testing
import TrellisTestSupport

/// The benchmark is run, never timed, by the tests: its quick mode must complete and report
/// every figure, for the C baseline and for Trellis.
@Suite("The benchmark's quick mode")
struct BenchQuickTests {
    @Test(
        "trellis-bench --quick prints and writes every figure",
        .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/cc"), "no C compiler for the baseline"))
    func quick() async throws {
        let bench = URL(fileURLWithPath: TrellisBinary.path).deletingLastPathComponent().appendingPathComponent(
            "trellis-bench"
        ).path
        let json = temporaryDirectory() + "/bench.json"
        let binary = try TrellisBinary.start(["--quick", "--json", json], executable: bench)
        #expect(try await binary.waitForExit(timeout: .seconds(600)) == 0, "\(binary.output)")
        for figure in [
            "QoS 0 latency p50", "QoS 0 latency p99", "QoS 0 latency max", "QoS 0 pipelined 64", "QoS 0 pipelined 512",
            "QoS 1 latency p50", "QoS 1 latency p99", "QoS 1 latency max", "QoS 1 pipelined 64", "QoS 1 pipelined 512",
            "fan-out presses/s", "fan-out deliveries/s", "Trellis peak RSS", "Trellis RSS before", "Trellis RSS after",
            "RSS growth", "load generator check", "Machine: nproc", "log ingest", "catalog/search round trip p50",
            "catalog/search round trip p99", "QoS 0 closed loop CPU per request, user (µs)",
            "QoS 1 pipelined 64 CPU per request, user + system (µs)", "Trellis start until announced and swept (s)"
        ] {
            #expect(binary.output.contains(figure), "missing \(figure)")
        }
        let document =
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: json))) as? [String: Any]
        #expect((document?["rows"] as? [Any])?.count == 28)
        #expect((document?["loadGeneratorCheck"] as? [Any])?.count == 2)
        // The quick mode measures in two rounds, both relays in each: every paired figure keeps both values.
        #expect(document?["rounds"] as? Int == 2)
        let rows = document?["rows"] as? [[String: Any]] ?? []
        let paired = rows.filter { ($0["figure"] as? String)?.contains("(req/s)") == true }
        #expect(paired.count == 4)
        // CPU per request, read from /proc in clock ticks (a quick run's few requests may span none):
        // for each relay and each of the four measurements, user time within user + system.
        let values = Dictionary(rows.compactMap { row in (row["figure"] as? String).map { ($0, row) } }) { first, _ in
            first
        }
        for measurement in ["QoS 0 closed loop", "QoS 1 closed loop", "QoS 0 pipelined 64", "QoS 1 pipelined 64"] {
            let user = values["\(measurement) CPU per request, user (µs)"],
                total = values["\(measurement) CPU per request, user + system (µs)"]
            for relay in ["baseline", "trellis"] {
                let (u, t) = (user?[relay] as? Double ?? -1, total?[relay] as? Double ?? -1)
                #expect(u >= 0 && u <= t, "\(measurement), \(relay): user \(u), user + system \(t)")
            }
        }
        // The traffic waited for the start's announcement and sweep, which took some time.
        #expect((values["Trellis start until announced and swept (s)"]?["trellis"] as? Double ?? 0) > 0)
        #expect(
            paired.allSatisfy {
                ($0["baselineRounds"] as? [Double])?.count == 2 && ($0["trellisRounds"] as? [Double])?.count == 2
            })
        #expect(binary.output.contains("medians of 2 rounds"))
    }

    @Test("trellis-bench --scaling --quick measures every figure at both scales and the listener series")
    func scalingQuick() async throws {
        let bench = URL(fileURLWithPath: TrellisBinary.path).deletingLastPathComponent().appendingPathComponent(
            "trellis-bench"
        ).path
        let binary = try TrellisBinary.start(["--scaling", "--quick"], executable: bench)
        #expect(try await binary.waitForExit(timeout: .seconds(600)) == 0, "\(binary.output)")
        let rows = binary.output.split(separator: "\n").filter { $0.hasPrefix("1× |") || $0.hasPrefix("2× |") }
        #expect(rows.count == 2, "\(binary.output)")
        for row in rows {
            // scale, things, start, peak RSS, then a p50 / CPU pair for each of the four operations (a plant
            // request, a press, a log line, a rejected request)
            let cells = row.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            #expect(cells.count == 8, "\(row)")
            for cell in cells.dropFirst(4) {
                let numbers = cell.split(whereSeparator: { !"0123456789.".contains($0) }).compactMap { Double($0) }
                #expect(numbers.count >= 2 && numbers[0] > 0, "no p50 in \(cell)")
            }
        }
        #expect(
            rows.first.map { $0.contains("| 10061 |") } == true,
            "the 1× state announces 7 plants, 10,004 buttons and 50 devices")
        let series = binary.output.split(separator: "\n").first { $0.hasPrefix("SQLite, press against its listeners") }
        #expect(
            series.map { line in ["10:", "100:", "1000:", "10000:"].allSatisfy { line.contains($0) } } == true,
            "\(binary.output)")
    }
}
