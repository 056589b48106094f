import Metrics
import Prometheus

/// The `# HELP` text of every series `/metrics` exports, by metric name: the one place a metric's
/// meaning is written. `DescribedMetricsFactory` attaches it to the swift-metrics handles, and the
/// process and build series take theirs from here too. A test reads the sources for metric names and
/// fails for any that has no entry here (and for entries no source names any more).
enum MetricHelp {
    static let texts: [String: String] = [
        // Bridges (BridgeCounters).
        "trellis_bridge_forwarded_total":
            "Messages a bridge's out rules kept and the upstream broker acknowledged, by bridge.",
        "trellis_bridge_carried_in_total":
            "Messages a bridge's in rules carried from the upstream broker and the local broker acknowledged, by bridge.",
        "trellis_bridge_arrivals_dropped_total":
            "Messages from a bridge's upstream broker not carried in, by bridge and reason (copy: its trellis-id was carried lately; loop: one of this relay's own bridges sent it; refused: the local broker or the client refused it, too large or not allowed there).",
        "trellis_bridge_refused_total":
            "Messages of a bridge's queue the upstream broker refused (a PUBACK reason of 0x80 or more) or the client could never send, dropped from the queue, by bridge.",
        "trellis_bridge_dropped_total":
            "Messages dropped from a bridge's queue, oldest first, by bridge, rule (the out rule's topic filter) and bound (age: bridges.NAME.max_age, bytes: bridges.NAME.max_bytes).",
        "trellis_bridge_queued_messages": "Messages waiting in a bridge's queue for the upstream broker, by bridge.",
        "trellis_bridge_queued_bytes": "Payload bytes waiting in a bridge's queue for the upstream broker, by bridge.",
        "trellis_bridge_rule_queued_messages":
            "Messages waiting in a bridge's queue for the upstream broker, by bridge and rule (the out rule's topic filter that kept them).",
        "trellis_bridge_rule_queued_bytes":
            "Payload bytes waiting in a bridge's queue for the upstream broker, by bridge and rule (the out rule's topic filter that kept them).",
        "trellis_bridge_queue_oldest_age_seconds":
            "Seconds the oldest message waiting in a bridge's queue has waited, 0 when none waits, by bridge (kept by the relay that forwards).",
        "trellis_bridge_unacknowledged_messages":
            "Messages a bridge's forwarder sent to the upstream broker that it has not yet acknowledged, at most the bridge's window, by bridge.",
        "trellis_bridge_link_connected":
            "1 while this relay's client of a bridge's link is connected to the upstream broker, by bridge and direction (out, in).",
        "trellis_bridge_link_standby":
            "1 while another relay of this relay's share group holds a bridge's link, by bridge and direction (out, in).",
        // The history of readings (HistoryService).
        "trellis_history_rows_total":
            "Rows the history's compaction changed, by outcome (folded: raw readings into their hours; expired: hours past history.hourly_days; dropped: a sensor's oldest beyond history.max_rows_per_sensor).",
        // Notifications (NotificationService).
        "trellis_notifications_sent_total": "Notifications a channel took, by channel.",
        "trellis_notifications_failed_total":
            "Attempts to send a notification that failed (each retried later), by channel.",
        "trellis_notifications_queued": "Notifications waiting in the outbox to be sent, by channel.",
        // Traffic (RelayCounters).
        "trellis_messages_received_total":
            "Messages received from the broker, by the Trellis service that handled them (unknown: no route matched).",
        "trellis_messages_published_total":
            "Messages Trellis published in answer to the messages it handled (replies, states, events), by service.",
        "trellis_replies_total": "Answers published, by plant operation (RES_...) or error tag (ERR_...).",
        "trellis_dead_letters_total": "Messages rejected and recorded as dead letters, by reason.",
        "trellis_limit_refusals_total":
            "Messages refused because their client was over a per-client limit, by limit (registrations, requests, device_messages).",
        "trellis_retained_swept_total":
            "Stale retained topics cleared by the sweep at start or after a discovery prefix change, by kind (discovery, device, model, plant).",
        "trellis_backups_total":
            "Backups of an SQLite state, by trigger (schedule, request) and outcome (written, failed; busy or rate_limited: a request refused).",
        "trellis_handler_duration_seconds":
            "Time Trellis took to handle one message and hand over its answers, the state store's reads and writes included.",
        "trellis_broker_reconnects_total": "Times the broker connection came back after a loss.",
        "trellis_redeliveries_dropped_total": "Messages the broker sent again after Trellis had handled them, dropped.",
        "trellis_broker_connected": "1 while Trellis is connected to the broker, 0 while it is not.",
        "trellis_share_group_relays":
            "Relays of this relay's share group whose trellis/status/<client id> last said online, this one included; 1 without a share group.",

        // Sizes of the state (refreshed at each scrape).
        "trellis_state_plants": "Plants in the state store.",
        "trellis_state_sensors": "Distinct sensor addresses assigned to plants.",
        "trellis_state_buttons": "Buttons pressed at least once.",
        "trellis_state_clients": "Button-service clients ever seen (by status or registration).",
        "trellis_state_dead_letters": "Dead letters kept in the state store.",
        "trellis_state_species": "Species in the plant catalog.",
        "trellis_state_devices": "Devices in the fleet registry.",
        "trellis_state_models": "Models of the fleet.",
        "trellis_state_device_log_entries": "Device log entries kept, over every device.",

        // The store's writes (refreshed at each scrape).
        "trellis_store_writable": "1 while the state store commits, 0 while its latest commit (or write probe) failed.",
        "trellis_store_failed_commits_total": "Commits of the state store that failed, written behind or direct.",
        "trellis_store_unwritten_changes":
            "Changes queued behind (readings, log lines, dead letters) and not yet committed.",
        "trellis_oldest_unwritten_change_seconds":
            "How long the oldest change queued behind has waited, in seconds; 0 when none waits.",

        // Socket.IO (SocketIOMetrics).
        "trellis_http_connections": "Connections open on each HTTP server (socketio, health, metrics).",
        "trellis_http_connections_closed_total":
            "HTTP connections the server closed by its limits, by server and reason (header_timeout, body_timeout, evicted, over_capacity).",
        "trellis_http_requests_refused_total":
            "Requests the metrics or health server refused, by server and reason (unknown_host: a web page's request for a Host name not trusted).",
        "trellis_socketio_sessions": "Engine.IO sessions open on the Socket.IO endpoint.",
        "trellis_socketio_sessions_opened_total": "Engine.IO sessions opened, by protocol generation (eio3, eio4).",
        "trellis_socketio_sessions_closed_total": "Engine.IO sessions closed, by reason.",
        "trellis_socketio_malformed_total":
            "Socket.IO packets or Engine.IO payloads that were not understood, by reason.",
        "trellis_socketio_presses_refused_total":
            "Presses over Socket.IO not applied, by reason (presses_off, missing_token, wrong_token).",
        "trellis_socketio_refused_total":
            "Socket.IO requests refused (answered with an Engine.IO error, from a page of a foreign origin, or from a page for an unknown Host name), by reason.",

        // The process (MetricsServer.ProcessSeries, read from /proc at each scrape).
        "trellis_resident_memory_bytes":
            "Resident memory of the process in bytes (VmRSS); process_resident_memory_bytes is the standard name of the same figure.",
        "process_cpu_seconds_total": "User and system CPU time the process spent, in seconds.",
        "process_resident_memory_bytes": "Resident memory of the process in bytes.",
        "process_virtual_memory_bytes": "Virtual memory of the process in bytes.",
        "process_start_time_seconds": "Start time of the process since the Unix epoch, in seconds.",
        "process_open_fds": "File descriptors the process has open.",
        "process_max_fds": "Most file descriptors the process may open (its soft limit).",

        // The build (MetricsServer.BuildInfo).
        "trellis_build_info":
            "Always 1; its labels name the running build: version (Trellis's version) and commit (the git commit it was built from, unknown when not known)."
    ]

    /// The help of `name`, empty when it has none (promtool and a test report that).
    static func text(for name: String) -> String { texts[name] ?? "" }
}

/// swift-prometheus's factory with a `# HELP` line for every metric: `PrometheusMetricsFactory`
/// registers each swift-metrics handle with empty help, so this one registers them on the same
/// registry by descriptor, with the text of `MetricHelp`. Buckets and destruction are the wrapped
/// factory's.
struct DescribedMetricsFactory: MetricsFactory {
    let base: PrometheusMetricsFactory
    private var registry: PrometheusCollectorRegistry { base.registry }

    init(_ base: PrometheusMetricsFactory) {
        self.base = base
    }

    /// `label` as the metric's whole name, with its help.
    static func descriptor(_ label: String) -> MetricNameDescriptor {
        MetricNameDescriptor(metricName: label, unitName: "", helpText: MetricHelp.text(for: label))
    }

    func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
        registry.makeCounter(descriptor: Self.descriptor(label), labels: dimensions)
    }

    func makeFloatingPointCounter(label: String, dimensions: [(String, String)]) -> any FloatingPointCounterHandler {
        registry.makeCounter(descriptor: Self.descriptor(label), labels: dimensions)
    }

    func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        guard aggregate else { return registry.makeGauge(descriptor: Self.descriptor(label), labels: dimensions) }
        let buckets = base.valueHistogramBuckets[label] ?? base.defaultValueHistogramBuckets
        return registry.makeValueHistogram(descriptor: Self.descriptor(label), labels: dimensions, buckets: buckets)
    }

    func makeMeter(label: String, dimensions: [(String, String)]) -> any MeterHandler {
        registry.makeGauge(descriptor: Self.descriptor(label), labels: dimensions)
    }

    func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
        let buckets = base.durationHistogramBuckets[label] ?? base.defaultDurationHistogramBuckets
        return registry.makeDurationHistogram(descriptor: Self.descriptor(label), labels: dimensions, buckets: buckets)
    }

    func destroyCounter(_ handler: any CounterHandler) { base.destroyCounter(handler) }
    func destroyFloatingPointCounter(_ handler: any FloatingPointCounterHandler) {
        base.destroyFloatingPointCounter(handler)
    }
    func destroyRecorder(_ handler: any RecorderHandler) { base.destroyRecorder(handler) }
    func destroyMeter(_ handler: any MeterHandler) { base.destroyMeter(handler) }
    func destroyTimer(_ handler: any TimerHandler) { base.destroyTimer(handler) }
}
