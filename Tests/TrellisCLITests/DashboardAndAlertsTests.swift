import Foundation
import Testing
import TrellisStore
import TrellisStoreSQLite
import TrellisTestSupport

/// The shipped Grafana dashboard and Prometheus rules against a real Prometheus scraping a running
/// Trellis every second: every query of the dashboard has data, every rule evaluates, and the
/// store alert fires while the SQLite store cannot commit.
@Suite(
    "Dashboard and alert rules",
    .enabled(if: PrometheusServer.isRequired, "Prometheus is not installed here: `make deps` installs it"))
struct DashboardAndAlertsTests {
    static let root = MarkdownDocument.repositoryRoot
    static let rulesPath = root.appendingPathComponent("deploy/prometheus/trellis-rules.yml").path
    static let dashboardPath = root.appendingPathComponent("deploy/grafana/trellis.json").path

    @Test("promtool check rules accepts deploy/prometheus/trellis-rules.yml")
    func rulesAreValid() throws {
        let check = try PrometheusServer.promtool(["check", "rules", Self.rulesPath])
        #expect(check.status == 0, "\(check.output)")
        #expect(check.output.contains("SUCCESS: 7 rules found"), "\(check.output)")
    }

    @Test("the dashboard: a templated Prometheus data source on every panel, and the job and instance variables")
    func dashboardIsTemplated() throws {
        let dashboard = try GrafanaDashboard(path: Self.dashboardPath)
        #expect(dashboard.variables["datasource"]?["type"] as? String == "datasource")
        #expect(dashboard.variables["datasource"]?["query"] as? String == "prometheus")
        #expect(dashboard.variables["job"] != nil && dashboard.variables["instance"] != nil)
        for panel in dashboard.panels where panel["type"] as? String != "row" {
            let title = panel["title"] as? String ?? "?"
            #expect((panel["datasource"] as? [String: Any])?["uid"] as? String == "${datasource}", "panel \(title)")
            let targets = panel["targets"] as? [[String: Any]] ?? []
            #expect(!targets.isEmpty, "panel \(title) has no query")
            for target in targets {
                #expect(!(target["expr"] as? String ?? "").isEmpty, "panel \(title)")
                #expect(
                    (target["datasource"] as? [String: Any])?["uid"] as? String == "${datasource}", "panel \(title)")
            }
        }
    }

    @Test(
        "every dashboard query has data from live traffic; every rule evaluates; the store alert fires while the store is locked"
    )
    func dashboardAndAlerts() async throws {
        let queries = try GrafanaDashboard(path: Self.dashboardPath).queries(
            job: "trellis", instance: ".*", rateInterval: "1m")
        #expect(queries.count >= 20)
        #expect(queries.allSatisfy { !$0.contains("$") }, "a dashboard variable is left in \(queries)")
        try await withMetricsTraffic { traffic in
            try await traffic.sendEverything()
            // The test's copy of the shipped rules: the same expressions, every `for:` shortened to 1s
            // so that a condition fires within seconds instead of minutes.
            let shipped = try String(contentsOfFile: Self.rulesPath, encoding: .utf8)
            let rules = shipped.replacing(try Regex(#"(?m)^(\s*)for: \S+$"#)) {
                "\($0.output[1].substring ?? "")for: 1s"
            }
            #expect(rules.components(separatedBy: "for: 1s").count - 1 == 7)
            try await withPrometheus(scraping: traffic.metricsPort, rules: rules) { prometheus in
                // Each round waits for a new scrape, with a plant request before it so rates have traffic.
                var missing = queries
                var round = 0
                let deadline = ContinuousClock.now + .seconds(120)
                while !missing.isEmpty {
                    guard ContinuousClock.now < deadline else {
                        throw TimeoutError(message: "no data after 120 s for \(missing)")
                    }
                    round += 1
                    try await traffic.askNumberOfPlants(id: round)
                    try await prometheus.waitForNextScrape()
                    var left: [String] = []
                    for query in missing where try await !prometheus.hasData(query) { left.append(query) }
                    missing = left
                }
                try await eventually("every rule has been evaluated without error") {
                    let rules = try await prometheus.ruleHealth()
                    return rules.count == 7 && rules.allSatisfy { $0.health == "ok" }
                }
                #expect(try await !prometheus.alerts().contains { $0.name == "TrellisStoreNotWritable" })

                try await withSQLiteWriteLock(traffic.stateDirectory + "/" + SQLiteStore.fileName) {
                    // The press meets SQLITE_BUSY after the busy timeout and waits, unacknowledged.
                    try traffic.client.publish(topic: "p2o/buttons/b1/press", payload: [], qos: .atLeastOnce)
                    try await eventually("TrellisStoreNotWritable fires", timeout: .seconds(90)) {
                        try await prometheus.alerts().contains {
                            $0.name == "TrellisStoreNotWritable" && $0.state == "firing"
                        }
                    }
                }
                // Released: the press is answered, the store writable again, and the alert ends.
                try await traffic.inbox.messages(on: "p2o/buttons/b1/state", count: 2, timeout: .seconds(60))
                try await eventually("the store is writable on /metrics") {
                    try await traffic.scrape().contains("trellis_store_writable 1")
                }
                try await eventually("TrellisStoreNotWritable ends", timeout: .seconds(60)) {
                    try await !prometheus.alerts().contains { $0.name == "TrellisStoreNotWritable" }
                }
            }
        }
    }

    /// Runs `body` with Prometheus scraping Trellis's `/metrics` on `port` every second as job
    /// `trellis` and evaluating `rules` every second; stops Prometheus whatever the outcome.
    func withPrometheus(scraping port: Int, rules: String, _ body: (PrometheusServer) async throws -> Void) async throws
    {
        let configuration = """
            global:
              scrape_interval: 1s
              scrape_timeout: 1s
              evaluation_interval: 1s
            rule_files:
              - rules.yml
            scrape_configs:
              - job_name: trellis
                static_configs:
                  - targets: ["127.0.0.1:\(port)"]
            """
        let prometheus = try await PrometheusServer.start(configuration: configuration, rules: rules)
        try await withTearDown(of: prometheus, { await $0.stop() }, body)
    }

    /// Runs `body` while `Tests/Faults/sqlite_lock.py` holds the write lock of the SQLite database at
    /// `path`; releases it whatever the outcome.
    func withSQLiteWriteLock(_ path: String, _ body: () async throws -> Void) async throws {
        let script = Self.root.appendingPathComponent("Tests/Faults/sqlite_lock.py").path
        let locker = try TrellisBinary.start([script, path], executable: "/usr/bin/python3")
        do {
            try await locker.waitForOutput("locked")
            try await body()
        } catch {
            _ = try? await locker.terminate()
            throw error
        }
        _ = try await locker.terminate()
    }
}

/// A Grafana dashboard's JSON as the dashboard tests read it: its panels, its template variables,
/// and every PromQL query in it with the variables replaced as Grafana would for one choice of them.
struct GrafanaDashboard {
    let panels: [[String: Any]]
    /// The template variables by name.
    let variables: [String: [String: Any]]

    init(path: String) throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        guard let json = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw CocoaError(.fileReadCorruptFile)
        }
        // Panels of collapsed rows are nested in the row.
        let top = json["panels"] as? [[String: Any]] ?? []
        panels = top + top.flatMap { $0["panels"] as? [[String: Any]] ?? [] }
        let list = (json["templating"] as? [String: Any])?["list"] as? [[String: Any]] ?? []
        variables = Dictionary(
            list.compactMap { variable in (variable["name"] as? String).map { ($0, variable) } },
            uniquingKeysWith: { first, _ in first })
    }

    /// Every panel target's `expr`, and each query variable's `label_values(SELECTOR, LABEL)` as the
    /// PromQL that has data exactly when the variable has values, with `$job`, `$instance` and
    /// `$__rate_interval` (or `${…}`) replaced by the values given.
    func queries(job: String, instance: String, rateInterval: String) -> [String] {
        let expressions = panels.flatMap { panel in
            (panel["targets"] as? [[String: Any]] ?? []).compactMap { $0["expr"] as? String }
        }
        let variableQueries = variables.values.compactMap { variable -> String? in
            guard variable["type"] as? String == "query" else { return nil }
            let query = (variable["query"] as? [String: Any])?["query"] as? String ?? variable["query"] as? String ?? ""
            guard query.hasPrefix("label_values("), query.hasSuffix(")"),
                let comma = query.lastIndex(of: ",")
            else { return nil }
            let selector = query[query.index(query.startIndex, offsetBy: "label_values(".count)..<comma]
            let label = query[query.index(after: comma)..<query.index(before: query.endIndex)].trimmingCharacters(
                in: .whitespaces)
            return "count by (\(label)) (\(selector))"
        }
        let values = ["__rate_interval": rateInterval, "job": job, "instance": instance]
        return (expressions + variableQueries.sorted()).map { expression in
            var text = expression
            // Longest names first, so `$job` does not eat the start of a longer name.
            for (name, value) in values.sorted(by: { $0.key.count > $1.key.count }) {
                text = text.replacingOccurrences(of: "${\(name)}", with: value).replacingOccurrences(
                    of: "$\(name)", with: value)
            }
            return text
        }
    }
}
