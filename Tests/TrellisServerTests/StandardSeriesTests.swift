import Foundation
import Prometheus
import Testing
import TrellisTestSupport
import TrellisCore
@testable import TrellisServer

/// The process series read from /proc and `trellis_build_info`.
@Suite("Process and build series")
struct StandardSeriesTests {
    @Test("a /proc/<pid>/stat line is read from after the last ')', whatever the command name holds")
    func parsesStat() throws {
        // Fields 14 and 15 (utime, stime) = 250 + 50 ticks, 22 (starttime) = 1000 ticks, 23 (vsize), 24 (rss pages).
        let stat =
            "4242 (tr (el) lis) S 1 4242 4242 0 -1 4194560 900 0 0 0 250 50 0 0 20 0 9 0 1000 805138432 13000 "
            + "18446744073709551615 1 1 0 0 0 0 0 4096 0 0 0 0 17 1 0 0 0 0 0\n"
        let series = try #require(
            MetricsServer.ProcessSeries.parse(
                stat: stat, bootTime: 1_700_000_000, ticksPerSecond: 100,
                pageSize: 4096))
        #expect(series.cpuSeconds == 3)
        #expect(series.startTimeSeconds == 1_700_000_010)
        #expect(series.virtualBytes == 805_138_432)
        #expect(series.residentBytes == 13000 * 4096)
        #expect(
            MetricsServer.ProcessSeries.parse(
                stat: "4242 (short) S 1", bootTime: 0, ticksPerSecond: 100, pageSize: 4096) == nil)
    }

    @Test("boot time from /proc/stat and the open-files soft limit from /proc/<pid>/limits")
    func parsesBootTimeAndLimits() {
        #expect(
            MetricsServer.ProcessSeries.bootTime(fromProcStat: "cpu  1 2 3\nintr 5\nbtime 1795619965\nprocesses 9\n")
                == 1_795_619_965)
        let limits = """
            Limit                     Soft Limit           Hard Limit           Units
            Max cpu time              unlimited            unlimited            seconds
            Max open files            1024                 1048576              files
            """
        #expect(MetricsServer.ProcessSeries.maxOpenFiles(fromLimits: limits) == 1024)
        #expect(
            MetricsServer.ProcessSeries.maxOpenFiles(
                fromLimits: "Max open files            unlimited            unlimited            files") == nil)
    }

    @Test("this process's series: plausible figures, each with help and type")
    func readsThisProcess() throws {
        let series = try #require(MetricsServer.ProcessSeries.read(), "no /proc here")
        #expect(series.residentBytes > 0 && series.virtualBytes >= series.residentBytes)
        #expect(series.startTimeSeconds <= Date().timeIntervalSince1970 + 1)
        #expect((series.openFDs ?? 0) > 0)
        var buffer = [UInt8]()
        series.emit(into: &buffer)
        let text = String(decoding: buffer, as: UTF8.self)
        for name in [
            "process_cpu_seconds_total", "process_resident_memory_bytes", "process_virtual_memory_bytes",
            "process_start_time_seconds", "process_open_fds"
        ] {
            #expect(text.contains("# HELP \(name) \(MetricHelp.text(for: name))\n# TYPE \(name) "), "\(text)")
        }
        #expect(text.contains("# TYPE process_cpu_seconds_total counter\n"))
    }

    @Test("trellis_build_info is 1 with Trellis's version and the commit it was built from")
    func buildInfo() throws {
        let registry = PrometheusCollectorRegistry()
        MetricsServer.BuildInfo.register(on: registry)
        let text = registry.emitToString()
        #expect(text.contains("# HELP trellis_build_info "))
        let line = try #require(text.split(separator: "\n").first { $0.hasPrefix("trellis_build_info{") })
        #expect(line.contains(#"version="\#(TrellisVersion.current)""#))
        #expect(line.hasSuffix(" 1.0") || line.hasSuffix(" 1"))
        let label = try Regex(#"commit="([^"]*)""#)
        let commit = try #require(line.firstMatch(of: label)?.output[1].substring)
        let stamped = try Regex("[0-9a-f]{12}")
        #expect(commit == "unknown" || commit.wholeMatch(of: stamped) != nil, "commit \(commit)")
        // Built from this checkout (swift test builds first): the commit is its HEAD.
        if let head = Repository.git(["rev-parse", "--short=12", "HEAD"]) {
            #expect(commit.hasPrefix(head), "built from \(commit), the checkout is at \(head)")
        }
    }
}
