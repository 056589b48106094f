import Logging
import ServiceLifecycle
import TrellisMQTT
import TrellisRelay
import TrellisServer
import TrellisSocketIO
import TrellisStore
import UnixSignals

/// One Trellis, assembled once: its MQTT client and session, the relay on its store, the relay's
/// statistics, backups and history compaction, and the servers ``ServerSettings`` turns on, in the order a service
/// group starts them (and stops them in reverse). `trellis run` builds it from the effective
/// configuration (``launch(_:flags:watchConfig:logger:)``) and the tests' relay harness from values,
/// on either store, so what a test runs is what is deployed.
package struct TrellisApplication: Sendable {
    /// The relay: routes, settings, counters, its connection.
    package let relay: RelayService
    /// The state it keeps; closed by whoever opened it, after the group stopped.
    package let store: any TrellisStore
    /// The services to run, in order: what came before the relay (a broker Trellis started), the
    /// relay, its statistics and backups, the servers, then what was appended (the configuration's reloader).
    package private(set) var services: [any Service]
    /// For each server, the line to log that says where it listens.
    package let announcements: [(message: String, address: ListenAddress)]

    /// How long the broker keeps the relay's session (its subscriptions and the QoS 1 messages that
    /// arrive meanwhile) while the relay is away: a week, so a relay stopped for an upgrade, a
    /// reboot or a long weekend's outage finds every request waiting.
    package static let sessionExpiry: UInt32 = 7 * 24 * 3600

    /// The largest packet a broker may send Trellis by default (`broker.max_packet_bytes`): 4 MiB, the
    /// shipped broker's own `max_packet_size`, room for a code upload past `devices.max_code_bytes` to
    /// arrive and be answered `too_large`; with the read-ahead window (`broker.max_unhandled`, 32),
    /// at most 128 MiB held on the broker connection (a bridge's `in` connection reads ahead its `window`).
    package static let maxPacketBytes = 4 * 1_048_576

    /// The MQTT session every relay keeps: its `offline` will, a session that outlives a
    /// disconnection by ``sessionExpiry``, `maxUnhandled` messages read ahead (`broker.max_unhandled`)
    /// and none larger than `maxPacketBytes` (`broker.max_packet_bytes`).
    package static func mqtt(
        host: String, port: Int, clientID: String, username: String? = nil, password: String? = nil,
        settings: RelaySettings, maxUnhandled: Int, maxPacketBytes: Int = maxPacketBytes,
        tls: MQTTTLSConfiguration? = nil
    ) -> MQTTConfiguration {
        MQTTConfiguration(
            host: host, port: port, clientID: clientID, username: username, password: password,
            will: RelayService.will(for: settings), cleanStart: false, sessionExpiry: sessionExpiry,
            maxUnhandledMessages: maxUnhandled, tls: tls, maximumPacketSize: maxPacketBytes)
    }

    /// The application on `store`, connecting as `mqtt` says; `before` run ahead of the relay (and
    /// stop after it). Each part logs under its own label (`trellis.relay`, `trellis.http`, …) at
    /// `logger`'s level.
    package init(
        store: any TrellisStore, mqtt: MQTTConfiguration, settings: RelaySettings, servers: ServerSettings,
        before: [any Service] = [], logger: Logger
    ) throws {
        func part(_ label: String) -> Logger {
            var part = Logger(label: label)
            // Under `trellis run` every logger already shares the process's level (setting it would
            // set that level); in tests, each follows the one given.
            if part.logLevel != logger.logLevel { part.logLevel = logger.logLevel }
            return part
        }
        let client = try MQTTClient(configuration: mqtt, logger: part("trellis.mqtt"))
        let relay = RelayService(client: client, store: store, settings: settings, logger: part("trellis.relay"))
        self.relay = relay
        self.store = store
        var services: [any Service] =
            before + [
                relay, StatsService(relay: relay, logger: part("trellis.stats")),
                BackupService(relay: relay, logger: part("trellis.backup")),
                HistoryService.service(relay: relay, logger: part("trellis.history"))
            ]
        // Each bridge's upstream links, by name and direction, for /readyz. In a share group the
        // relays take turns on one upstream session, named after the group.
        var links: [(bridge: String, direction: String, link: UpstreamLink)] = []
        let owner = settings.shareGroup ?? mqtt.clientID
        for bridge in settings.bridges {
            if !bridge.outRules.isEmpty {
                let forwarder = try BridgeForwarder(
                    bridge: bridge, store: store, owner: owner, group: settings.shareGroup,
                    maximumPacketSize: mqtt.maximumPacketSize, logger: part("trellis.bridge"))
                services.append(forwarder)
                links.append((bridge.name, "out", forwarder.link))
            }
            if !bridge.inRules.isEmpty {
                let receiver = try BridgeReceiver(
                    bridge: bridge, local: relay.client, store: store, owner: owner, group: settings.shareGroup,
                    maximumPacketSize: mqtt.maximumPacketSize, logger: part("trellis.bridge"))
                services.append(receiver)
                links.append((bridge.name, "in", receiver.link))
            }
        }
        if !settings.notifications.channels.isEmpty {
            let plan = settings.notifications
            let channels = NotificationChannels(
                plan: plan, senders: try NotificationSenders.make(plan, http: NotificationSenders.http))
            services.append(NotificationService(store: store, channels: channels, logger: part("trellis.notify")))
            if NotificationWatch.isNeeded(for: plan) {
                let bridgeLinks = links
                let broker = relay.client
                let watch = NotificationWatch(store: store, channels: channels, logger: part("trellis.notify")) {
                    [NotificationWatch.Link(name: "broker link", up: broker.isConnected)]
                        + bridgeLinks.map {
                            NotificationWatch.Link(
                                name: "bridge \($0.bridge) (\($0.direction))",
                                up: $0.link.isConnected || $0.link.standby)
                        }
                }
                services.append(watch.service())
            }
        }
        var announcements: [(message: String, address: ListenAddress)] = []
        let bridgeLinks = links
        let probes = Probes(relay: relay) {
            bridgeLinks.map {
                ProbeLink(
                    name: $0.bridge, direction: $0.direction, connected: $0.link.isConnected,
                    standby: $0.link.standby)
            }
        }
        let http = part("trellis.http")
        if let address = servers.metrics {
            services.append(
                MetricsServer.service(
                    address: address, relay: relay, probes: probes, limits: servers.probeConnections,
                    hosts: servers.allowedHosts, logger: http))
            announcements.append(("serving /metrics, /livez and /readyz", address))
        }
        if let address = servers.health {
            services.append(
                HealthServer.service(
                    address: address, probes: probes, limits: servers.probeConnections,
                    hosts: servers.allowedHosts, logger: http))
            announcements.append(("serving /livez and /readyz", address))
        }
        if let address = servers.console {
            services.append(
                try ConsoleServer.service(
                    address: address, relay: relay, probes: probes, login: servers.consoleLogin,
                    limits: servers.probeConnections, hosts: servers.allowedHosts, logger: http))
            announcements.append(("serving the console", address))
        }
        if servers.systemd, let notifier = SystemdNotifier() {
            services.append(
                SystemdService(
                    notifier: notifier, relay: relay, probes: probes, watchdog: SystemdNotifier.watchdogPeriod(),
                    logger: part("trellis.systemd")))
        }
        if let address = servers.socketIO {
            services.append(
                SocketIOServer.service(
                    address: address, relay: relay, settings: servers.socketIOSessions,
                    logger: part("trellis.socketio")))
            announcements.append(("serving the button service to Socket.IO clients on /socket.io/", address))
        }
        self.services = services
        self.announcements = announcements
    }

    /// Runs `service` after the others start (and stops it first).
    package mutating func append(_ service: any Service) {
        services.append(service)
    }

    /// The group that runs the services, shutting down gracefully on `signals`.
    package func group(logger: Logger, shutdownOn signals: [UnixSignal] = []) -> ServiceGroup {
        ServiceGroup(
            configuration: .init(
                services: services.map { ServiceGroupConfiguration.ServiceConfiguration(service: $0) },
                gracefulShutdownSignals: signals, logger: logger))
    }
}
