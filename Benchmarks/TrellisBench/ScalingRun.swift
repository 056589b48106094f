import Foundation
import TrellisMQTT
import TrellisStore
import TrellisStorePostgres
import TrellisStoreSQLite

/// `trellis-bench --scaling`: how a request's cost grows with the state. For each store and each
/// scale of ``ScalingState``, a fresh relay on that state: the time from its start until its Home
/// Assistant announcement and retained sweep are done and its peak memory then; then the closed-loop
/// p50 and the CPU time per request (all of the relay's threads, from `/proc`) of a plant request,
/// a press of `b0` (until every listener has it), a device log line (until it is streamed back) and
/// a rejected plant request (until its `ERR_` reply; it is kept as a dead letter, so it measures
/// the trim of the capped dead letters too).
/// At 1×, also a press against its number of listeners. Ratios are to the same figure at 1× in the
/// same run, so the machine's speed cancels out.
struct ScalingRun {
    let port: Int
    let scales: [Int]
    /// Closed-loop plant requests and log lines per figure.
    let requests: Int
    /// The deliveries a press figure aims at (``presses(listeners:)``): 50,000, or 5,000 in the quick mode.
    var pressDeliveries = 50_000
    /// Where the PostgreSQL runs create (and drop) their database; nil: SQLite only.
    let postgres: PostgresURL?

    /// One measured figure: p50 in µs and CPU µs per operation.
    struct Cost { var p50: Double; var cpu: Double }

    /// Measures and prints the table, line by line.
    func run(work: String) async throws {
        let lines = Printed([
            "How the cost grows with the state (closed loop, one operation at a time; p50 in µs, CPU µs per operation;",
            "ratios to the same store at 1×)", ""
        ])
        var listenerLines: [String] = []
        for store in postgres == nil ? ["SQLite"] : ["SQLite", "PostgreSQL"] {
            var base: [String: Cost] = [:]
            lines.append(
                "\(store) | things announced | start to announced (s) | peak RSS (MB) | plant request p50 / CPU | press p50 / CPU (listeners) | log line p50 / CPU | rejected request p50 / CPU"
            )
            for scale in scales {
                let state = ScalingState(scale: scale)
                let (started, peak, costs) = try await measure(
                    state, store: store, work: work, listenersToo: scale == scales.first)
                if scale == scales.first { base = costs }
                func cell(_ key: String) -> String {
                    guard let cost = costs[key] else { return "-" }
                    let ratio =
                        base[key].map { String(format: " (%.2f× / %.2f×)", cost.p50 / $0.p50, cost.cpu / $0.cpu) } ?? ""
                    return String(format: "%.0f / %.0f", cost.p50, cost.cpu) + ratio
                }
                lines.append(
                    "\(scale)× | \(state.things) | " + String(format: "%.1f | %.1f", started, Double(peak) / 1024)
                        + " | \(cell("plant")) | \(cell("press")) (\(state.listeners)) | \(cell("log")) | \(cell("rejected"))"
                )
                if scale == scales.first {
                    listenerLines.append(
                        "\(store), press against its listeners (state \(scale)×) | "
                            + ScalingState.listenerSeries.map { count in
                                costs["n\(count)"].map {
                                    String(format: "%d: %.0f µs / %.0f µs CPU", count, $0.p50, $0.cpu)
                                } ?? "\(count): -"
                            }.joined(separator: " | "))
                }
            }
            lines.append("")
        }
        for line in listenerLines { lines.append(line) }
    }

    /// Lines printed as they are added, so that a run cut short keeps what it measured.
    private struct Printed {
        init(_ lines: [String]) { for line in lines { append(line) } }
        func append(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }
    }

    /// One relay on `state`: its start, then every figure.
    private func measure(_ state: ScalingState, store: String, work: String, listenersToo: Bool)
        async throws -> (started: Double, peakKiB: Int, costs: [String: Cost])
    {
        let name = "scale-\(store.lowercased())-\(state.scale)"
        // Writing the 100× state is one long transaction: progress of its own for the watchdog.
        let ticker = Task {
            while !Task.isCancelled {
                Watchdog.tick()
                try? await Task.sleep(for: .seconds(5))
            }
        }
        defer { ticker.cancel() }
        let dump = try await state.dump()
        var database: PostgresURL?
        if store == "PostgreSQL", let server = postgres {
            let url = try await PostgresServer.createDatabase(named: "\(server.database)_scaling", on: server)
            let target = try await PostgresStore.connect(url, owner: "bench-scaling")
            try await target.importState(dump, replacing: true)
            try await target.close()
            database = url
        } else {
            let target = try SQLiteStore(directory: work + "/state-\(name)")
            try await target.importState(dump, replacing: true)
            try await target.close()
        }
        do {
            let measured = try await measure(
                state, name: name, work: work, database: database, listenersToo: listenersToo)
            if let database, let server = postgres {
                await PostgresServer.dropDatabase(named: database.database, on: server)
            }
            return measured
        } catch {
            if let database, let server = postgres {
                await PostgresServer.dropDatabase(named: database.database, on: server)
            }
            throw error
        }
    }

    /// The relay's start and figures on the state already written.
    private func measure(_ state: ScalingState, name: String, work: String, database: PostgresURL?, listenersToo: Bool)
        async throws -> (started: Double, peakKiB: Int, costs: [String: Cost])
    {
        let relay = try await Contender.trellis(
            port: port, work: work, species: 0,
            setup: .prepared(postgresURL: database.map(\.withPassword)), name: name,
            readyLine: Contender.announced, readyTimeout: .seconds(900))
        defer { relay.stop() }
        let started = seconds(relay.startup)
        let peak = relay.peakKiB()

        var costs: [String: Cost] = [:]
        var load = try await LoadGenerator.connect(
            port: port, id: "bench-scaling",
            replyFilters: [
                "\(relay.plantPrefix)/fromrpi", "trellis/logs/d0",
                "\(relay.buttonPrefix)/clients/+/button-press"
            ])
        costs["plant"] = try await cost(of: relay, count: requests) {
            try await load.closedLoop(
                count: requests, qos: .atLeastOnce, topic: "\(relay.plantPrefix)/torpi",
                suffix: Array(relay.replySuffix.utf8))
        }
        costs["log"] = try await cost(of: relay, count: requests) {
            try await load.logLines(count: requests, device: "d0")
        }
        costs["rejected"] = try await cost(of: relay, count: requests) {
            try await load.closedLoop(
                count: requests, qos: .atLeastOnce, topic: "\(relay.plantPrefix)/torpi",
                suffix: Array("operation:ERR_invalidOpTag".utf8), request: LoadGenerator.rejectedRequest)
        }
        let pressCount = presses(listeners: state.listeners)
        costs["press"] = try await cost(of: relay, count: pressCount) {
            try await load.presses(
                count: pressCount, button: "b0", listeners: state.listeners, prefix: relay.buttonPrefix)
        }
        if listenersToo {
            for count in ScalingState.listenerSeries {
                let pressCount = presses(listeners: count)
                costs["n\(count)"] = try await cost(of: relay, count: pressCount) {
                    try await load.presses(
                        count: pressCount, button: "n\(count)", listeners: count, prefix: relay.buttonPrefix)
                }
            }
        }
        await load.client.shutdown()
        return (started, peak, costs)
    }

    /// Presses per figure: enough for a steady median, fewer where each reaches thousands (at least 10, or
    /// 2 in the quick mode, whose figures only show that each is measured).
    func presses(listeners: Int) -> Int {
        let least = pressDeliveries < 50_000 ? 2 : 10
        return max(least, min(500, pressDeliveries / listeners))
    }

    /// The p50 of `body`'s samples, after a warm-up of a tenth, and the relay's CPU per operation over them.
    private func cost(of relay: Contender, count: Int, _ body: () async throws -> [Double]) async throws -> Cost {
        _ = try await body() // warm-up: caches, prepared statements, the allocator
        let before = relay.cpuNanoseconds()
        let samples = try await body()
        let cpu = Double(relay.cpuNanoseconds() - before) / 1_000 / Double(count)
        return Cost(p50: samples.percentile(0.5), cpu: cpu)
    }

    private func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}

extension PostgresURL {
    /// The URL with its password (its description hides it), for a benchmarked relay's `--store`.
    var withPassword: String {
        "postgres://\(user)\(password.map { ":" + $0 } ?? "")@\(host):\(port)/\(database)"
    }
}
