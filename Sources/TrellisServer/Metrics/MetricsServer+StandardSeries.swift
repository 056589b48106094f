import Foundation
import Prometheus
import TrellisCore

/// The series every Prometheus exporter has beside its own: the process's (CPU, memory, file
/// descriptors, start time) and the build's. Dashboards and alerts written for any service work on
/// Trellis with them.
extension MetricsServer {
    /// The process series every Prometheus client library exports (`process_cpu_seconds_total`,
    /// `process_resident_memory_bytes`, …), read from /proc at each scrape. Where /proc is missing
    /// (not Linux) there are none.
    struct ProcessSeries: Equatable {
        /// User plus system CPU time, in seconds.
        var cpuSeconds: Double
        var residentBytes: Int
        var virtualBytes: Int
        /// When the process started, in seconds since the Unix epoch.
        var startTimeSeconds: Double
        var openFDs: Int?
        /// The soft limit on open files; nil when unlimited.
        var maxFDs: Int?

        /// The figures now, or nil without /proc.
        static func read() -> ProcessSeries? {
            guard let stat = try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8),
                let system = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
                let bootTime = bootTime(fromProcStat: system)
            else { return nil }
            var series = parse(
                stat: stat, bootTime: bootTime, ticksPerSecond: sysconf(Int32(_SC_CLK_TCK)),
                pageSize: sysconf(Int32(_SC_PAGESIZE)))
            // Counts the descriptor that lists the directory too, as the Go client's collector does.
            series?.openFDs = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd"))?.count
            if let limits = try? String(contentsOfFile: "/proc/self/limits", encoding: .utf8) {
                series?.maxFDs = maxOpenFiles(fromLimits: limits)
            }
            return series
        }

        /// The figures of a `/proc/<pid>/stat` line. The command name (field 2) is in parentheses and may
        /// itself hold spaces and parentheses, so the fields are counted from the last `)`.
        static func parse(stat: String, bootTime: Int, ticksPerSecond: Int, pageSize: Int) -> ProcessSeries? {
            guard ticksPerSecond > 0, let close = stat.lastIndex(of: ")") else { return nil }
            // After the name: field 3 (state) is at index 0, so field N is at index N - 3.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            func field(_ number: Int) -> Int? {
                number - 3 < fields.count
                    ? Int(fields[number - 3].trimmingCharacters(in: .whitespacesAndNewlines)) : nil
            }
            guard let utime = field(14), let stime = field(15), let start = field(22), let vsize = field(23),
                let rss = field(24)
            else { return nil }
            let ticks = Double(ticksPerSecond)
            return ProcessSeries(
                cpuSeconds: Double(utime + stime) / ticks, residentBytes: rss * pageSize, virtualBytes: vsize,
                startTimeSeconds: Double(bootTime) + Double(start) / ticks)
        }

        /// The boot time (`btime`, seconds since the epoch) from `/proc/stat`.
        static func bootTime(fromProcStat text: String) -> Int? {
            text.split(separator: "\n").first { $0.hasPrefix("btime ") }
                .flatMap { Int($0.dropFirst("btime ".count).trimmingCharacters(in: .whitespaces)) }
        }

        /// The soft limit of the `Max open files` line of `/proc/<pid>/limits`; nil when unlimited.
        static func maxOpenFiles(fromLimits text: String) -> Int? {
            guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("Max open files") }) else {
                return nil
            }
            return line.dropFirst("Max open files".count).split(separator: " ").first.flatMap { Int($0) }
        }

        /// Appends the series in the Prometheus text format, each with its help from `MetricHelp`.
        func emit(into buffer: inout [UInt8]) {
            Self.append("process_cpu_seconds_total", type: "counter", value: "\(cpuSeconds)", into: &buffer)
            Self.append("process_resident_memory_bytes", type: "gauge", value: "\(residentBytes)", into: &buffer)
            Self.append("process_virtual_memory_bytes", type: "gauge", value: "\(virtualBytes)", into: &buffer)
            Self.append("process_start_time_seconds", type: "gauge", value: "\(startTimeSeconds)", into: &buffer)
            if let openFDs { Self.append("process_open_fds", type: "gauge", value: "\(openFDs)", into: &buffer) }
            if let maxFDs { Self.append("process_max_fds", type: "gauge", value: "\(maxFDs)", into: &buffer) }
        }

        private static func append(_ name: String, type: String, value: String, into buffer: inout [UInt8]) {
            buffer.append(
                contentsOf: "# HELP \(name) \(MetricHelp.text(for: name))\n# TYPE \(name) \(type)\n\(name) \(value)\n"
                    .utf8)
        }
    }

    /// `trellis_build_info{version,commit} 1`: which build runs, in the form Prometheus exporters use
    /// (join on it, or count versions across relays). `version` is `TrellisVersion.current`; `commit` is
    /// `TrellisVersion.commit`, the git commit this binary was built from (`unknown` outside a checkout).
    enum BuildInfo {
        static let name = "trellis_build_info"

        static var labels: [(String, String)] {
            [("version", TrellisVersion.current), ("commit", TrellisVersion.commit)]
        }

        /// Registers the series on `registry`, set to 1 for good.
        static func register(on registry: PrometheusCollectorRegistry) {
            let descriptor = MetricNameDescriptor(metricName: name, unitName: "", helpText: MetricHelp.text(for: name))
            registry.makeGauge(descriptor: descriptor, labels: labels).set(to: 1)
        }
    }
}
