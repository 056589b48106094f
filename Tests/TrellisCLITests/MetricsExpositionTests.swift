import Foundation
import Metrics
import Prometheus
import Testing
import TrellisCore
import TrellisTestSupport
@testable import trellis

/// Every metric the sources name has its one-line help in `MetricHelp`, the table has no entry for a
/// metric that is gone, the factory puts the help on the exported series, and Prometheus's own
/// linter finds nothing to say about `/metrics` of a running Trellis after real traffic.
@Suite("Metrics exposition: help and promtool")
struct MetricsExpositionTests {
    static let sources = MarkdownDocument.repositoryRoot.appendingPathComponent("Sources")

    /// Metric names written in the sources, with a file naming each: the name of every swift-metrics
    /// handle made with a literal label, and every `"trellis_…"` or `"process_…"` literal of a file that
    /// makes metrics (it imports Metrics or Prometheus) or of `Sources/trellis/Operations`. The help
    /// table itself is left out.
    static func metricNamesInSources() throws -> [String: String] {
        let handle = try Regex(#"(?:Counter|Gauge|Timer|Recorder|Meter)\(label:\s*"([A-Za-z0-9_:]+)""#)
        let literal = try Regex(#""((?:trellis|process)_[a-z0-9_]+)""#)
        var names: [String: String] = [:]
        let files = FileManager.default.enumerator(atPath: sources.path)?.compactMap { $0 as? String } ?? []
        for file in files where file.hasSuffix(".swift") && !file.hasSuffix("/MetricHelp.swift") {
            let text = try String(contentsOf: sources.appendingPathComponent(file), encoding: .utf8)
            for match in text.matches(of: handle) {
                if let name = match.output[1].substring { names[String(name)] = file }
            }
            let makesMetrics = text.contains("\nimport Metrics\n") || text.contains("\nimport Prometheus\n")
                || text.hasPrefix("import Metrics\n") || text.hasPrefix("import Prometheus\n")
            guard makesMetrics || file.hasPrefix("trellis/Operations/") else { continue }
            for match in text.matches(of: literal) {
                if let name = match.output[1].substring { names[String(name)] = file }
            }
        }
        return names
    }

    @Test("every metric named in the sources has one line of help in MetricHelp")
    func everyMetricHasHelp() throws {
        let names = try Self.metricNamesInSources()
        #expect(names.count >= 25, "the scan found \(names.count) names: \(names.keys.sorted())")
        for (name, file) in names.sorted(by: { $0.key < $1.key }) {
            let help = MetricHelp.text(for: name)
            #expect(!help.isEmpty, "\(name) (Sources/\(file)) has no help in Sources/trellis/Operations/MetricHelp.swift")
            #expect(!help.contains("\n") && !help.contains("\\"), "\(name): help must be one line without backslashes")
        }
    }

    @Test("MetricHelp has no entry for a metric the sources no longer name")
    func noStaleHelp() throws {
        let names = try Self.metricNamesInSources()
        for name in MetricHelp.texts.keys.sorted() {
            #expect(names[name] != nil, "MetricHelp describes \(name), which no source names")
        }
    }

    @Test("the factory registers swift-metrics handles with their help; a name without help gets none")
    func factoryAttachesHelp() {
        let registry = PrometheusCollectorRegistry()
        let factory = DescribedMetricsFactory(PrometheusMetricsFactory(registry: registry))
        factory.makeCounter(label: "trellis_dead_letters_total", dimensions: [("reason", "unknown_topic")]).increment(by: 2)
        factory.makeRecorder(label: "trellis_store_writable", dimensions: [], aggregate: false).record(Int64(1))
        factory.makeTimer(label: "trellis_handler_duration_seconds", dimensions: []).recordNanoseconds(1000)
        factory.makeCounter(label: "undescribed_total", dimensions: []).increment(by: 1)
        let text = registry.emitToString()
        #expect(text.contains("# HELP trellis_dead_letters_total \(MetricHelp.text(for: "trellis_dead_letters_total"))\n"))
        #expect(text.contains(#"trellis_dead_letters_total{reason="unknown_topic"} 2"#))
        #expect(text.contains("# HELP trellis_store_writable "))
        #expect(text.contains("# HELP trellis_handler_duration_seconds "))
        #expect(text.contains("# TYPE undescribed_total counter") && !text.contains("# HELP undescribed_total"))
    }

    /// Series that the traffic of `MetricsTraffic.sendEverything()` makes exist.
    static let expected = [
        #"trellis_messages_received_total{service="plant"}"#, #"trellis_messages_received_total{service="buttons"}"#,
        #"trellis_messages_received_total{service="devices"}"#, #"trellis_messages_published_total{service="plant"}"#,
        #"trellis_replies_total{operation="RES_numPlants"}"#, #"trellis_dead_letters_total{reason="ERR_missingVals"}"#,
        "trellis_handler_duration_seconds_bucket", #"trellis_socketio_sessions_opened_total{protocol="eio4"}"#,
        "trellis_socketio_sessions ", "trellis_store_writable 1", "trellis_broker_connected 1", "trellis_share_group_relays 1",
        "trellis_state_device_log_entries 1", "process_cpu_seconds_total ", "process_resident_memory_bytes ",
        "process_virtual_memory_bytes ", "process_start_time_seconds ", "process_open_fds ", "process_max_fds ",
        #"trellis_build_info{version="\#(TrellisVersion.current)",commit=""#,
    ]

    @Test("promtool check metrics finds nothing to say about /metrics after a plant request, a press, a device log line and a Socket.IO session",
          .enabled(if: PrometheusServer.isRequired, "Prometheus is not installed here: `make deps` installs it"))
    func promtoolIsSilent() async throws {
        try await withMetricsTraffic { traffic in
            try await traffic.sendEverything()
            var text = ""
            try await eventually("every series of the traffic is on /metrics") {
                text = try await traffic.scrape()
                return Self.expected.allSatisfy { text.contains($0) }
            }
            let check = try PrometheusServer.promtool(["check", "metrics"], input: text)
            #expect(check.output.isEmpty, "promtool check metrics said:\n\(check.output)")
            #expect(check.status == 0)

            // Every family's TYPE line comes right after its HELP line.
            let lines = text.split(separator: "\n").map(String.init)
            let types = lines.indices.filter { lines[$0].hasPrefix("# TYPE ") }
            #expect(types.count >= 30, "\(types.count) families")
            for index in types {
                let name = lines[index].split(separator: " ")[2]
                #expect(index > 0 && lines[index - 1].hasPrefix("# HELP \(name) "), "\(name) has no HELP line before its TYPE")
            }
        }
    }
}
