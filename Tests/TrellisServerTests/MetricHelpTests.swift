import Foundation
import Metrics
import Prometheus
import Testing
import TrellisTestSupport
@testable import TrellisServer

/// Every metric the sources name has its one-line help in `MetricHelp`, the table has no entry for a
/// metric that is gone, and the factory puts the help on the exported series.
@Suite("Metric help")
struct MetricHelpTests {
    static let sources = Repository.root.appendingPathComponent("Sources")

    /// Metric names written in the sources, with a file naming each: the name of every swift-metrics
    /// handle made with a literal label, and every `"trellis_…"` or `"process_…"` literal of a file that
    /// makes metrics (it imports Metrics or Prometheus) or of `Sources/TrellisServer`. The help
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
            let makesMetrics =
                text.contains("\nimport Metrics\n") || text.contains("\nimport Prometheus\n")
                || text.hasPrefix("import Metrics\n") || text.hasPrefix("import Prometheus\n")
            guard makesMetrics || file.hasPrefix("TrellisServer/") else { continue }
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
            #expect(
                !help.isEmpty, "\(name) (Sources/\(file)) has no help in Sources/TrellisServer/Metrics/MetricHelp.swift"
            )
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
        factory.makeCounter(label: "trellis_dead_letters_total", dimensions: [("reason", "unknown_topic")]).increment(
            by: 2)
        factory.makeRecorder(label: "trellis_store_writable", dimensions: [], aggregate: false).record(Int64(1))
        factory.makeTimer(label: "trellis_handler_duration_seconds", dimensions: []).recordNanoseconds(1000)
        factory.makeCounter(label: "undescribed_total", dimensions: []).increment(by: 1)
        let text = registry.emitToString()
        #expect(
            text.contains("# HELP trellis_dead_letters_total \(MetricHelp.text(for: "trellis_dead_letters_total"))\n"))
        #expect(text.contains(#"trellis_dead_letters_total{reason="unknown_topic"} 2"#))
        #expect(text.contains("# HELP trellis_store_writable "))
        #expect(text.contains("# HELP trellis_handler_duration_seconds "))
        #expect(text.contains("# TYPE undescribed_total counter") && !text.contains("# HELP undescribed_total"))
    }
}
