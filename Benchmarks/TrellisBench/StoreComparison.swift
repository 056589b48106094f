import Foundation
import TrellisMQTT
import TrellisStore
import TrellisStorePostgres

/// `trellis-bench --stores URL`: one relay on SQLite, one on PostgreSQL, and two on PostgreSQL in a
/// `$share` group, side by side on one Mosquitto, with the minimal C relay beside them as the
/// broker's ceiling. Each round measures every setup one right after the other, in a rotating
/// order; the table gives each setup's medians and the median of its per-round ratios to SQLite.
struct StoreComparison {
    let port: Int
    let loadgen: CLoadGenerator
    let closedLoop: Int
    let pipelined: Int
    let presses: Int
    let rounds: Int
    /// The server's URL; the comparison creates (and drops) two databases of its own there.
    let server: PostgresURL

    static let measurements: [RoundRunner.Measurement] = [
        .closedLoop(.atLeastOnce), .pipelined(.atLeastOnce, window: 64), .pipelined(.atLeastOnce, window: 512), .fanOut
    ]

    func run(work: String) async throws -> String {
        let one = try await Self.createDatabase(on: server, named: "\(server.database)_bench_one")
        let two = try await Self.createDatabase(on: server, named: "\(server.database)_bench_two")
        do {
            let table = try await measure(one: one, two: two, work: work)
            await Self.dropDatabase(on: server, named: one.database)
            await Self.dropDatabase(on: server, named: two.database)
            return table
        } catch {
            await Self.dropDatabase(on: server, named: one.database)
            await Self.dropDatabase(on: server, named: two.database)
            throw error
        }
    }

    private func measure(one: PostgresURL, two: PostgresURL, work: String) async throws -> String {
        let baseline = try await Contender.baseline(port: port, work: work)
        let setups = [
            try await Contender.trellis(
                port: port, work: work, species: 0, setup: .sqlite, name: "sqlite",
                prefixes: ("sq1", "sq2"), spamWindow: "0.001",
                readyLine: Contender.announced, readyTimeout: .seconds(300)),
            try await Contender.trellis(
                port: port, work: work, species: 0, setup: .postgres(url: one.withPassword, relays: 1),
                name: "pg-one", prefixes: ("pg1", "pq1"), spamWindow: "0.001",
                readyLine: Contender.announced, readyTimeout: .seconds(300)),
            try await Contender.trellis(
                port: port, work: work, species: 0, setup: .postgres(url: two.withPassword, relays: 2),
                name: "pg-two", prefixes: ("pg2", "pq2"), spamWindow: "0.001",
                readyLine: Contender.announced, readyTimeout: .seconds(300))
        ]
        let all = [baseline] + setups
        let runner = RoundRunner(
            port: port, loadgen: loadgen, kind: .c, closedLoop: closedLoop, pipelined: pipelined, presses: presses,
            pipelinedLatency: true, cpuFigures: false)
        var figures: [String: [Figures]] = [:]
        for round in 0..<rounds {
            for measurement in Self.measurements {
                let order = all.indices.map { all[($0 + round) % all.count] }
                if case let .closedLoop(qos) = measurement {
                    for (contender, measured) in zip(order, try await runner.closedLoop(qos, on: order)) {
                        if figures[contender.name, default: []].count <= round {
                            figures[contender.name, default: []].append([:])
                        }
                        figures[contender.name]![round].merge(measured) { $1 }
                    }
                    continue
                }
                for contender in order {
                    let measured = try await runner.measure(measurement, on: contender)
                    if figures[contender.name, default: []].count <= round {
                        figures[contender.name, default: []].append([:])
                    }
                    figures[contender.name]![round].merge(measured) { $1 }
                }
            }
        }
        for contender in all { contender.stop() }
        return Self.render(figures, names: all.map(\.name), rounds: rounds)
    }

    /// The comparison as a text table.
    static func render(_ figures: [String: [Figures]], names: [String], rounds: Int) -> String {
        let labels = [
            "baseline": "C relay", "sqlite": "SQLite, 1 relay", "pg-one": "PostgreSQL, 1 relay",
            "pg-two": "PostgreSQL, 2 relays"
        ]
        let keys = (figures["sqlite"]?.first?.keys.sorted() ?? []).filter {
            !$0.contains("latency max") && !$0.contains("deliveries")
        }
        var lines = [
            "Stores compared, \(rounds) rounds, medians (ratios: median of the per-round ratios to SQLite, [lowest–highest])",
            ""
        ]
        lines.append(
            "figure | " + names.map { labels[$0] ?? $0 }.joined(separator: " | ") + " | PG 1 / SQLite | PG 2 / SQLite")
        for key in keys {
            let values = names.map { name in (figures[name] ?? []).compactMap { $0[key] } }
            let cells = values.map { String(format: "%.0f", $0.median) }
            let sqlite = values[names.firstIndex(of: "sqlite") ?? 0]
            let ratios = ["pg-one", "pg-two"].map { name -> String in
                let other = values[names.firstIndex(of: name) ?? 0]
                let perRound = zip(sqlite, other).map { $0 > 0 ? $1 / $0 : 0 }
                return String(format: "%.2f× [%.2f–%.2f]", perRound.median, perRound.min() ?? 0, perRound.max() ?? 0)
            }
            lines.append("\(key) | " + cells.joined(separator: " | ") + " | " + ratios.joined(separator: " | "))
        }
        lines.append("")
        lines.append(
            "Targets: PostgreSQL with 2 relays ≥ 0.9× SQLite in QoS 1 pipelined throughput (512 in flight), with a p50 ≤ 1.5×"
        )
        lines.append(
            "SQLite's in that run (`QoS 1 pipelined 512 latency p50`). `QoS 1 latency` is one request at a time (a closed loop)."
        )
        return lines.joined(separator: "\n")
    }

    static func createDatabase(on server: PostgresURL, named name: String) async throws -> PostgresURL {
        try await PostgresServer.createDatabase(named: name, on: server)
    }

    static func dropDatabase(on server: PostgresURL, named name: String) async {
        await PostgresServer.dropDatabase(named: name, on: server)
    }
}
