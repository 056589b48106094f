import Foundation
import Metrics
import Prometheus
import Testing
import TrellisCore
import TrellisTestSupport
@testable import trellis

/// Prometheus's own linter finds nothing to say about `/metrics` of a running Trellis after real
/// traffic (the help table is checked in `TrellisServerTests/MetricHelpTests`).
@Suite("Metrics exposition: promtool")
struct MetricsExpositionTests {
    /// Series that the traffic of `MetricsTraffic.sendEverything()` makes exist.
    static let expected = [
        #"trellis_messages_received_total{service="plant"}"#, #"trellis_messages_received_total{service="buttons"}"#,
        #"trellis_messages_received_total{service="devices"}"#, #"trellis_messages_published_total{service="plant"}"#,
        #"trellis_replies_total{operation="RES_numPlants"}"#, #"trellis_dead_letters_total{reason="ERR_missingVals"}"#,
        "trellis_handler_duration_seconds_bucket", #"trellis_socketio_sessions_opened_total{protocol="eio4"}"#,
        "trellis_socketio_sessions ", "trellis_store_writable 1", "trellis_broker_connected 1",
        "trellis_share_group_relays 1",
        "trellis_state_device_log_entries 1", "process_cpu_seconds_total ", "process_resident_memory_bytes ",
        "process_virtual_memory_bytes ", "process_start_time_seconds ", "process_open_fds ", "process_max_fds ",
        #"trellis_build_info{version="\#(TrellisVersion.current)",commit=""#
    ]

    @Test(
        "promtool check metrics finds nothing to say about /metrics after a plant request, a press, a device log line and a Socket.IO session",
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
                #expect(
                    index > 0 && lines[index - 1].hasPrefix("# HELP \(name) "),
                    "\(name) has no HELP line before its TYPE")
            }
        }
    }
}
