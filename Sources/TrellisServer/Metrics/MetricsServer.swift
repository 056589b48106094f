import Foundation
import Hummingbird
import Logging
import Metrics
import Prometheus
import ServiceLifecycle
import Synchronization
import TrellisRelay
import TrellisSocketIO
import TrellisStore

/// `--metrics`: Prometheus text on `/metrics` (swift-prometheus behind swift-metrics) and the
/// probes (``HealthServer``), served by Hummingbird on a loopback address by default.
public enum MetricsServer {
    /// The registry every swift-metrics handle of the process reports to.
    static let registry = PrometheusCollectorRegistry()

    /// Routes swift-metrics to Prometheus, every metric with its help (`MetricHelp`), and registers
    /// `trellis_build_info`; call once, before any metric is made.
    public static func bootstrap() {
        var factory = PrometheusMetricsFactory(registry: registry)
        // Handlers take microseconds to milliseconds; the default buckets start at 5 ms.
        factory.durationHistogramBuckets["trellis_handler_duration_seconds"] = [
            .microseconds(25), .microseconds(50), .microseconds(100), .microseconds(250), .microseconds(500),
            .milliseconds(1), .milliseconds(2.5), .milliseconds(5), .milliseconds(10), .milliseconds(25),
            .milliseconds(100), .seconds(1)
        ]
        MetricsSystem.bootstrap(DescribedMetricsFactory(factory))
        BuildInfo.register(on: registry)
    }

    /// The text of `/metrics`: the registry's series, refreshed from `relay` and the bridges' `links`
    /// first, then the process's.
    static func exposition(gauges: StateGauges, relay: RelayService, links: [ProbeLink] = []) async -> [UInt8] {
        await gauges.update(from: relay)
        gauges.update(links: links)
        var buffer = [UInt8]()
        registry.emit(into: &buffer)
        ProcessSeries.read()?.emit(into: &buffer)
        return buffer
    }

    /// The HTTP service.
    package static func service(
        address: ListenAddress, relay: RelayService, probes: Probes, limits: ConnectionLimits,
        hosts: HostPolicy, logger: Logger
    ) -> some Service {
        Application(
            router: router(relay: relay, probes: probes, hosts: hosts, logger: logger),
            server: .http1(server: "metrics", limits: limits, logger: logger),
            configuration: .init(address: .hostname(address.host, port: address.port), serverName: "trellis"),
            logger: logger)
    }

    /// `/metrics` and the probes' routes, behind the ``HostGuard``.
    static func router(
        relay: RelayService, probes: Probes, hosts: HostPolicy = .literalsOnly,
        logger: Logger = Logger(label: "trellis.http")
    ) -> Router<BasicRequestContext> {
        let gauges = StateGauges()
        let router = Router()
        router.add(middleware: HostGuard(server: "metrics", hosts: hosts, logger: logger))
        router.get("/metrics") { _, _ -> Response in
            let buffer = await exposition(gauges: gauges, relay: relay, links: probes.links())
            return Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(bytes: buffer)))
        }
        HealthServer.addRoutes(to: router, probes: probes)
        return router
    }
}

/// Gauges refreshed at each scrape: state sizes, resident memory, the oldest unwritten change, the
/// broker connection, the share group's relays online and the bridges' links.
final class StateGauges: Sendable {
    private let plants = Gauge(label: "trellis_state_plants")
    private let sensors = Gauge(label: "trellis_state_sensors")
    private let buttons = Gauge(label: "trellis_state_buttons")
    private let clients = Gauge(label: "trellis_state_clients")
    private let deadLetters = Gauge(label: "trellis_state_dead_letters")
    private let species = Gauge(label: "trellis_state_species")
    private let devices = Gauge(label: "trellis_state_devices")
    private let models = Gauge(label: "trellis_state_models")
    private let deviceLogEntries = Gauge(label: "trellis_state_device_log_entries")
    private let resident = Gauge(label: "trellis_resident_memory_bytes")
    private let unwritten = Gauge(label: "trellis_oldest_unwritten_change_seconds")
    private let unwrittenChanges = Gauge(label: "trellis_store_unwritten_changes")
    private let writable = Gauge(label: "trellis_store_writable")
    private let failedCommits = Counter(label: "trellis_store_failed_commits_total")
    private let brokerConnected = Gauge(label: "trellis_broker_connected")
    private let shareGroupRelays = Gauge(label: "trellis_share_group_relays")
    /// Failed commits already added to `failedCommits`.
    private let failedCommitsReported = Mutex(0)

    /// Each bridge link's `trellis_bridge_link_connected` (1 while this relay's client is connected
    /// upstream) and `trellis_bridge_link_standby` (1 while another relay of its share group holds
    /// the link), by bridge and direction.
    func update(links: [ProbeLink]) {
        for link in links {
            let dimensions = [("bridge", link.name), ("direction", link.direction)]
            Gauge(label: "trellis_bridge_link_connected", dimensions: dimensions).record(link.connected ? 1 : 0)
            Gauge(label: "trellis_bridge_link_standby", dimensions: dimensions).record(link.standby ? 1 : 0)
        }
    }

    func update(from relay: RelayService) async {
        brokerConnected.record(relay.client.isConnected ? 1 : 0)
        shareGroupRelays.record(relay.shareGroupRelaysOnline)
        let store = relay.engine.store
        // The state sizes keep their last values while the store does not answer within a second.
        if let counts = await store.counts(within: .seconds(1)) {
            plants.record(counts.plants)
            sensors.record(counts.sensors)
            buttons.record(counts.buttons)
            clients.record(counts.clients)
            deadLetters.record(counts.deadLetters)
            species.record(counts.species)
            devices.record(counts.devices)
            models.record(counts.models)
            deviceLogEntries.record(counts.deviceLogEntries)
        }
        if let bytes = ProcessMemory.residentBytes() { resident.record(bytes) }
        let writes = await store.writeStatus()
        unwritten.record(writes.oldestUnwrittenChangeSeconds ?? 0)
        unwrittenChanges.record(writes.unwrittenChanges)
        writable.record(writes.writable ? 1 : 0)
        let delta = failedCommitsReported.withLock { reported -> Int in
            defer { reported = max(reported, writes.failedCommits) }
            return max(0, writes.failedCommits - reported)
        }
        if delta > 0 { failedCommits.increment(by: delta) }
    }
}
