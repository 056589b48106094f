import Foundation
import Configuration
import TrellisBroker
import TrellisCore
import TrellisMQTT
import TrellisRelay
import TrellisServer
import TrellisStore
import TrellisStorePostgres
import TrellisSocketIO

/// One setting of `trellis run`: its key in the YAML file (nested by concern), its environment
/// variable, its type, default and allowed values. The table `SettingKey.all` is the single
/// source of the configuration file's schema, `trellis config check` and `trellis.example.yaml`.
package struct SettingKey: Sendable {
    package enum Kind: Sendable {
        case string, int, double, bool

        var configType: ConfigType {
            switch self {
            case .string: .string
            case .int: .int
            case .double: .double
            case .bool: .bool
            }
        }

        package var name: String {
            switch self {
            case .string: "a string"
            case .int: "an integer"
            case .double: "a number"
            case .bool: "true or false"
            }
        }
    }

    /// The dotted key, e.g. `spam.limit`.
    package var key: String
    /// The flag of `trellis run` that sets it (`spam-limit` for `--spam-limit`), nil for none: the
    /// file and the environment only. `RunCommand` declares it as a property of that name.
    package var flag: String? = nil
    package var kind: Kind
    /// The default, as the file would spell it.
    package var defaultValue: ConfigContent
    /// One line saying what it does.
    package var help: String
    /// Whether SIGHUP (or a watched file change) applies a new value without a restart.
    package var reloadable: Bool
    /// Returns a sentence saying what is allowed when `value` is not.
    package var check: @Sendable (ConfigContent) -> String? = { _ in nil }

    /// `TRELLIS_` followed by the key in upper case with `_` for `.`: `TRELLIS_SPAM_LIMIT`.
    package var environmentName: String {
        "TRELLIS_" + key.uppercased().replacingOccurrences(of: ".", with: "_")
    }
}

extension SettingKey {
    /// A number of at least 0.
    package static func nonNegative(_ content: ConfigContent) -> String? {
        switch content {
        case let .int(value) where value < 0: "a number of at least 0"
        case let .double(value) where !(value >= 0) || !value.isFinite: "a number of at least 0"
        default: nil
        }
    }

    package static func positive(_ content: ConfigContent) -> String? {
        switch content {
        case let .int(value) where value < 1: "a whole number of at least 1"
        case let .double(value) where !(value > 0) || !value.isFinite: "a number greater than 0"
        default: nil
        }
    }

    /// A whole number from 1 to `maximum`.
    package static func between1(and maximum: Int) -> @Sendable (ConfigContent) -> String? {
        between(1, and: maximum)
    }

    /// A whole number from `minimum` to `maximum`.
    package static func between(_ minimum: Int, and maximum: Int) -> @Sendable (ConfigContent) -> String? {
        { content in
            guard case let .int(value) = content, value < minimum || value > maximum else { return nil }
            return "a whole number from \(minimum) to \(maximum)"
        }
    }

    /// A share group name: not empty where given, and no `/`, `+` or `#` (MQTT 5, 4.8.2).
    package static func shareGroup(_ content: ConfigContent) -> String? {
        guard case let .string(value) = content, !value.isEmpty else { return nil }
        return value.contains(where: { "/+#".contains($0) }) ? "a name without /, + or #" : nil
    }

    /// Empty, or a PostgreSQL URL this version can use.
    package static func storeURL(_ content: ConfigContent) -> String? {
        guard case let .string(value) = content, !value.isEmpty else { return nil }
        do {
            _ = try PostgresURL(value)
            return nil
        } catch {
            return
                "empty or postgres://user[:password]@host[:port]/database (\((error as? StoreError)?.message ?? "\(error)"))"
        }
    }

    package static func oneOf(_ allowed: [String]) -> @Sendable (ConfigContent) -> String? {
        { content in
            guard case let .string(value) = content, !allowed.contains(value) else { return nil }
            return "one of " + allowed.joined(separator: ", ")
        }
    }

    package static func address(_ content: ConfigContent) -> String? {
        guard case let .string(value) = content, !value.isEmpty else { return nil }
        do {
            _ = try BrokerURL(parsing: value)
            return nil
        } catch {
            return "\(BrokerURL.allowedForms), or empty (here: \(error.problem))"
        }
    }

    /// A file (or, for the CA, a directory) for the TLS connection; checked for existence when
    /// `trellis run` starts, so `config check` stays valid on another machine.
    package static func tlsFile(_ content: ConfigContent) -> String? {
        guard case let .string(value) = content, !value.isEmpty, value.trimmingCharacters(in: .whitespaces).isEmpty
        else { return nil }
        return "a file name, or empty"
    }

    package static func topicPrefix(_ content: ConfigContent) -> String? {
        guard case let .string(value) = content else { return nil }
        if value.isEmpty || value.contains(where: { "+#".contains($0) }) || value.hasPrefix("/") || value.hasSuffix("/")
        {
            return "a topic prefix without '+', '#' or a leading or trailing '/'"
        }
        return nil
    }

    /// Every setting, in the order of the example file.
    package static let all: [SettingKey] = {
        let relay = RelaySettings()
        return [
            SettingKey(
                key: "broker.address", flag: "broker", kind: .string, defaultValue: .string(""),
                help:
                    "Use the broker at mqtt://HOST[:PORT] (port 1883), mqtts://HOST[:PORT] (TLS, port 8883) or HOST:PORT, IPv6 in brackets, user:password@ allowed before the host; empty starts one from broker.config.",
                reloadable: false, check: address),
            SettingKey(
                key: "broker.config", flag: "broker-config", kind: .string, defaultValue: .string("broker.conf"),
                help:
                    "Mosquitto configuration of the broker Trellis starts (embedded default when the file is absent).",
                reloadable: false),
            SettingKey(
                key: "broker.client_id", flag: "client-id", kind: .string, defaultValue: .string(""),
                help:
                    "MQTT client id; its persistent session keeps QoS 1 messages sent while Trellis is stopped. Empty: trellis- and 20 random characters, made at the first start and kept in <state.dir>/client-id, which no client can guess or read (the broker hands an id to whoever connects with it last).",
                reloadable: false),
            SettingKey(
                key: "broker.share_group", flag: "share", kind: .string, defaultValue: .string(""),
                help:
                    "Share the load with other relays: subscribe to every request and event as $share/GROUP/<filter>, so each message reaches one relay of the group (each with its own broker.client_id, all on one state.store); retained online/offline moves to trellis/status/<client id>.",
                reloadable: false, check: shareGroup),
            SettingKey(
                key: "broker.username", flag: "username", kind: .string, defaultValue: .string(""),
                help:
                    "User name for brokers that require a login (the secure profile's trellis account); empty: the user info of broker.address, if any.",
                reloadable: false),
            SettingKey(
                key: "broker.password_file", flag: "password-file", kind: .string, defaultValue: .string(""),
                help:
                    "File whose first line is the broker password (else the user info of broker.address, else TRELLIS_PASSWORD).",
                reloadable: false),
            SettingKey(
                key: "broker.tls.ca", flag: "tls-ca", kind: .string, defaultValue: .string(""),
                help:
                    "With an mqtts:// address: PEM file, or hashed directory, of the CAs that may sign the broker's certificate; empty trusts the system's CAs.",
                reloadable: false, check: tlsFile),
            SettingKey(
                key: "broker.tls.cert", flag: "tls-cert", kind: .string, defaultValue: .string(""),
                help:
                    "With an mqtts:// address: client certificate (PEM) for brokers that require one; needs broker.tls.key.",
                reloadable: false, check: tlsFile),
            SettingKey(
                key: "broker.tls.key", flag: "tls-key", kind: .string, defaultValue: .string(""),
                help: "With an mqtts:// address: the client certificate's private key (PEM, unencrypted).",
                reloadable: false, check: tlsFile),
            SettingKey(
                key: "broker.max_unhandled", flag: "max-unhandled", kind: .int, defaultValue: .int(32),
                help:
                    "Messages read ahead of the handlers, and the QoS 1 messages the broker may send before Trellis acknowledges them (each only once handled): more is faster and holds more in memory; at most 1024, well inside the 4,096 deliveries Trellis remembers to drop redeliveries.",
                reloadable: false, check: between1(and: 1024)),
            SettingKey(
                key: "broker.max_packet_bytes", flag: "max-packet-bytes", kind: .int,
                defaultValue: .int(TrellisApplication.maxPacketBytes),
                help:
                    "Largest MQTT packet a broker may send Trellis, in bytes, announced on connect (MQTT v5 Maximum Packet Size), also on both of each bridge's upstream connections: the broker holds a larger message back from Trellis and logs it, so a flood of huge messages cannot take Trellis's memory. It must be at least twice devices.max_code_bytes and 64 KiB more, room for a model build's device and agent code (Trellis refuses to start, and a reload, otherwise), so that an upload within that bound reaches Trellis and is answered.",
                // At most MQTT's largest packet (a Remaining Length of 268,435,455 bytes).
                reloadable: false, check: between(4096, and: 268_435_455)),
            SettingKey(
                key: "state.dir", flag: "state", kind: .string, defaultValue: .string("trellis-state"),
                help: "Directory of the SQLite state (and of the broker Trellis starts).", reloadable: false),
            SettingKey(
                key: "state.store", flag: "store", kind: .string, defaultValue: .string(""),
                help:
                    "Where the state lives: empty for SQLite in state.dir, or postgres://user[:password]@host[:port]/database[?sslmode=disable|prefer|require|verify-full] for a PostgreSQL database several relays share (docs/scaling-out.md); a URL with a password belongs in TRELLIS_STATE_STORE or the file, where other users' ps cannot read it.",
                reloadable: false, check: storeURL),
            SettingKey(
                key: "state.backup.dir", kind: .string, defaultValue: .string(""),
                help:
                    "Where backups of an SQLite state go, on the schedule and when an operator asks on trellis/request/store/backup; empty: state.dir/backups. Best on another disk than the state.",
                reloadable: true),
            SettingKey(
                key: "state.backup.interval", kind: .double, defaultValue: .double(relay.backupInterval),
                help:
                    "Seconds between two scheduled backups of an SQLite state (86400: daily); 0 takes them only when asked.",
                reloadable: true, check: nonNegative),
            SettingKey(
                key: "state.backup.keep", kind: .int, defaultValue: .int(relay.backupKeep),
                help:
                    "Scheduled backups kept in state.backup.dir; the oldest beyond are removed after each new one (backups asked for are kept apart, state.backup.request_keep).",
                reloadable: true, check: between1(and: 10_000)),
            SettingKey(
                key: "state.backup.request_interval", kind: .double, defaultValue: .double(relay.backupRequestInterval),
                help:
                    "Seconds between two backups an operator may ask for on trellis/request/store/backup; one asked for sooner is refused (rate_limited), naming when the next is allowed.",
                reloadable: true, check: nonNegative),
            SettingKey(
                key: "state.backup.request_keep", kind: .int, defaultValue: .int(relay.backupRequestKeep),
                help:
                    "Backups asked for that are kept (trellis-requested-<time>.sqlite), apart from the scheduled ones, which a request never removes.",
                reloadable: true, check: between1(and: 10_000)),
            SettingKey(
                key: "history.raw_days", kind: .int, defaultValue: .int(relay.historyRetention.rawDays),
                help:
                    "Days each sensor reading is kept as it came, for plants/history and trellis plants history; older readings are folded into their hour.",
                reloadable: true, check: between1(and: 3_660)),
            SettingKey(
                key: "history.hourly_days", kind: .int, defaultValue: .int(relay.historyRetention.hourlyDays),
                help:
                    "Days each sensor's hourly minimum, mean, maximum and count are kept; older hours are deleted.",
                reloadable: true, check: between1(and: 36_600)),
            SettingKey(
                key: "history.max_rows_per_sensor", kind: .int,
                defaultValue: .int(relay.historyRetention.maxRowsPerSensor),
                help:
                    "Most raw readings, and most hourly rows, one sensor keeps in the history; beyond, its oldest are dropped at the next compaction, and counted.",
                reloadable: true, check: between1(and: 100_000_000)),
            SettingKey(
                key: "history.compact_every", kind: .int, defaultValue: .int(Int(relay.historyCompactionInterval)),
                help:
                    "Seconds between two compactions of the history (each one store transaction on a task of its own); the first runs at start.",
                reloadable: true, check: between1(and: 86_400)),
            SettingKey(
                key: "plant.host_name", flag: "host-name", kind: .string, defaultValue: .string(relay.hostName),
                help: "The plant tracker host's name: the sender of every reply.", reloadable: true),
            SettingKey(
                key: "plant.prefix", flag: "plant-prefix", kind: .string, defaultValue: .string(relay.plantPrefix),
                help: "Topic prefix of the plant tracker: <prefix>/torpi, <prefix>/fromrpi, <prefix>/sensors.",
                reloadable: true, check: topicPrefix),
            SettingKey(
                key: "plant.dialect", flag: "plant-dialect", kind: .string,
                defaultValue: .string(relay.plantDialect.rawValue),
                help:
                    "Dialect of the shared topics <prefix>/torpi and <prefix>/fromrpi: original (the released iPhone app's) or lossless; per-client topics are always lossless.",
                reloadable: true, check: oneOf(PlantDialect.allCases.map(\.rawValue))),
            SettingKey(
                key: "plant.max_plants", flag: "max-plants", kind: .int, defaultValue: .int(relay.maxPlants),
                help: "Most plants the tracker keeps (ERR_tooManyPlants beyond).", reloadable: true, check: positive),
            SettingKey(
                key: "plant.max_name_length", kind: .int, defaultValue: .int(relay.maxPlantNameLength),
                help: "Longest plant name in characters (ERR_plantNameTooLong beyond).", reloadable: true,
                check: positive),
            SettingKey(
                key: "plant.plants_file", flag: "plants-file", kind: .string, defaultValue: .string(""),
                help: "Plants added at start when absent, one per line as name,sensor[,sensor...].", reloadable: false),
            SettingKey(
                key: "buttons.prefix", flag: "button-prefix", kind: .string, defaultValue: .string(relay.buttonPrefix),
                help: "Topic prefix of the button service: <prefix>/buttons, <prefix>/clients.", reloadable: true,
                check: topicPrefix),
            SettingKey(
                key: "buttons.history_limit", kind: .int, defaultValue: .int(relay.historyLimit),
                help: "Presses kept in each button's history.", reloadable: true, check: positive),
            SettingKey(
                key: "buttons.socketio_address", flag: "socketio", kind: .string, defaultValue: .string(""),
                help:
                    "Serve the button service to Socket.IO clients (the P2O apps, which use port 3001) on /socket.io/ here (HOST:PORT, or a port on 127.0.0.1); empty: off.",
                reloadable: false,
                check: { content in
                    guard case let .string(value) = content, !value.isEmpty, ListenAddress(value) == nil else {
                        return nil
                    }
                    return "HOST:PORT such as 0.0.0.0:3001, [::1]:3001, a port alone (127.0.0.1), or empty"
                }),
            SettingKey(
                key: "buttons.socketio_max_sessions", flag: "socketio-max-sessions", kind: .int,
                defaultValue: .int(10_000),
                help: "Most Socket.IO sessions at once; further handshakes are refused with HTTP 503.",
                reloadable: false, check: positive),
            SettingKey(
                key: "buttons.socketio_max_sessions_per_address", flag: "socketio-max-sessions-per-address", kind: .int,
                defaultValue: .int(100),
                help:
                    "Most Socket.IO sessions one remote address may hold; further handshakes from it are refused with HTTP 429. 0: no limit (behind a reverse proxy every client has its address).",
                reloadable: false,
                check: { content in
                    guard case let .int(value) = content, value < 0 else { return nil }
                    return "a whole number of at least 0"
                }),
            SettingKey(
                key: "buttons.socketio_press_token_file", flag: "socketio-press-token-file", kind: .string,
                defaultValue: .string(""),
                help:
                    "File holding the token a Socket.IO client must present (?token= or an X-Trellis-Press-Token or Authorization: Bearer header on the handshake, or auth {token} in Socket.IO 5) to press buttons; empty: presses over Socket.IO are refused.",
                reloadable: false),
            SettingKey(
                key: "buttons.socketio_allowed_origins", flag: "socketio-allowed-origins", kind: .string,
                defaultValue: .string(""),
                help:
                    "Web pages (origins, comma-separated: http://HOST[:PORT] or https://HOST[:PORT]; * for any) that may use the Socket.IO endpoint besides its own origin; a browser request from another is refused with 403 (requests without an Origin, from apps and scripts, are not affected).",
                reloadable: false,
                check: { content in
                    guard case let .string(value) = content, case let .failure(error) = OriginPolicy.parse(value) else {
                        return nil
                    }
                    return "origins separated by commas (\(error))"
                }),
            SettingKey(
                key: "buttons.socketio_max_connections", kind: .int,
                defaultValue: .int(ConnectionLimits.socketIO.maximumConnections),
                help:
                    "Most connections to the Socket.IO endpoint at once; beyond, a new one replaces the one waiting longest for its first request, or is closed at once.",
                reloadable: false, check: positive),
            SettingKey(
                key: "spam.limit", flag: "spam-limit", kind: .int, defaultValue: .int(relay.spamLimit),
                help: "Most plant tracker messages one sender may send within spam.window (ERR_kickedForSpam beyond).",
                reloadable: true, check: positive),
            SettingKey(
                key: "spam.window", flag: "spam-window", kind: .double, defaultValue: .double(relay.spamWindow),
                help: "Length of the spam window, in seconds.", reloadable: true, check: positive),
            SettingKey(
                key: "limits.registrations_per_client", kind: .int, defaultValue: .int(relay.maxRegistrationsPerClient),
                help:
                    "Most buttons one button-service client (MQTT or Socket.IO) may be registered for at once; a further register is answered failed.",
                reloadable: true, check: positive),
            SettingKey(
                key: "limits.requests_per_second", kind: .double, defaultValue: .double(relay.requestRate.rate),
                help:
                    "JSON requests a second one client may keep up (trellis/clients/<client>/request/...; the shared trellis/request/... topics share one allowance); beyond, rate_limited. 0: no limit.",
                reloadable: true, check: nonNegative),
            SettingKey(
                key: "limits.requests_burst", kind: .int, defaultValue: .int(relay.requestRate.burst),
                help: "JSON requests one client may send at once after a pause, within limits.requests_per_second.",
                reloadable: true, check: positive),
            SettingKey(
                key: "limits.device_messages_per_second", kind: .double,
                defaultValue: .double(relay.deviceMessageRate.rate),
                help:
                    "Messages a second one device may keep up on devices/<id>/status, telemetry and log; beyond, they are dropped (the first of a run dead-lettered as rate_limited). 0: no limit.",
                reloadable: true, check: nonNegative),
            SettingKey(
                key: "limits.device_messages_burst", kind: .int, defaultValue: .int(relay.deviceMessageRate.burst),
                help: "Messages one device may send at once after a pause, within limits.device_messages_per_second.",
                reloadable: true, check: positive),
            SettingKey(
                key: "limits.dead_letters_per_client", kind: .int, defaultValue: .int(relay.deadLettersPerClient),
                help:
                    "Dead letters kept per client (named by its topic, else the plant sender; the rest share one count); a client's older letters are evicted first, so one client never evicts another's.",
                reloadable: true, check: positive),
            SettingKey(
                key: "limits.dead_letter_page_bytes", kind: .int, defaultValue: .int(relay.deadLetterPageBytes),
                help:
                    "Most bytes of letters one deadletters/list answer carries, escaped; the rest follows with next_cursor. Keep it well under the broker's max_packet_size (4 MiB).",
                reloadable: true, check: between1(and: 3_145_728)),
            SettingKey(
                key: "devices.max_devices", flag: "max-devices", kind: .int, defaultValue: .int(relay.maxDevices),
                help: "Most devices in the fleet registry; messages from further unknown devices are dead-lettered.",
                reloadable: true, check: positive),
            SettingKey(
                key: "devices.log_limit", flag: "device-log-limit", kind: .int,
                defaultValue: .int(relay.deviceLogLimit),
                help: "Log entries kept per device (older ones are dropped), and the most logs/get returns.",
                reloadable: true, check: positive),
            SettingKey(
                key: "devices.max_code_bytes", flag: "max-code-bytes", kind: .int,
                defaultValue: .int(relay.maxCodeBytes),
                help: "Largest device or agent code of a model build, in bytes (too_large beyond).", reloadable: true,
                check: positive),
            SettingKey(
                key: "devices.operators", flag: "operators", kind: .string, defaultValue: .string(""),
                help:
                    "Clients, comma-separated, that may change the fleet and read dead letters on their per-client JSON topics.",
                reloadable: true,
                check: { content in
                    guard case let .string(value) = content else { return nil }
                    let names = value.split(separator: ",", omittingEmptySubsequences: false).map {
                        $0.trimmingCharacters(in: .whitespaces)
                    }
                    if value.isEmpty { return nil }
                    return names.contains(where: { $0.isEmpty || $0.contains(where: { "/+#".contains($0) }) })
                        ? "client ids separated by commas, none empty and none containing '/', '+' or '#'" : nil
                }),
            SettingKey(
                key: "security.restrict_response_topics", flag: "secure", kind: .bool,
                defaultValue: .bool(relay.restrictResponseTopics),
                help:
                    "Honour a v5 Response Topic only inside the requester's own reply topics (docs/security.md); false is refused while Trellis logs in with an account. --secure, once needed, is the default now.",
                reloadable: false),
            SettingKey(
                key: "clock.max_future_skew", kind: .double, defaultValue: .double(relay.maxFutureSkew),
                help:
                    "Seconds a message's own time (a press, a reading's at, a log line's timestamp) may lie ahead of Trellis's clock; a later one is dead-lettered as future_time, as it would stay the newest for ever.",
                reloadable: true, check: nonNegative),
            SettingKey(
                key: "stats.interval", flag: "stats-interval", kind: .double,
                defaultValue: .double(relay.statsInterval),
                help: "Seconds between two publications of the retained trellis/stats.", reloadable: true,
                check: positive),
            SettingKey(
                key: "homeassistant.enabled", kind: .bool, defaultValue: .bool(relay.homeAssistantEnabled),
                help:
                    "Publish Home Assistant MQTT discovery configs, so plants, buttons and devices appear there by themselves; false removes those published.",
                reloadable: true),
            SettingKey(
                key: "homeassistant.discovery_prefix", kind: .string, defaultValue: .string(relay.discoveryPrefix),
                help:
                    "Topic prefix Home Assistant reads discovery configs under (its MQTT integration's discovery prefix).",
                reloadable: true, check: topicPrefix),
            SettingKey(
                key: "metrics.address", flag: "metrics", kind: .string, defaultValue: .string(""),
                help:
                    "Serve Prometheus /metrics, and the probes /livez and /readyz, here (HOST:PORT, or a port on 127.0.0.1); empty: off.",
                reloadable: false,
                check: { content in
                    guard case let .string(value) = content, !value.isEmpty, ListenAddress(value) == nil else {
                        return nil
                    }
                    return ListenAddress.expected + ", or empty"
                }),
            SettingKey(
                key: "health.address", flag: "health", kind: .string, defaultValue: .string(""),
                help:
                    "Serve the probes /livez and /readyz here (HOST:PORT, or a port on 127.0.0.1), whether or not metrics are exported; `trellis health` asks them; empty: off.",
                reloadable: false,
                check: { content in
                    guard case let .string(value) = content, !value.isEmpty, ListenAddress(value) == nil else {
                        return nil
                    }
                    return ListenAddress.expected + ", or empty"
                }),
            SettingKey(
                key: "console.address", flag: "console", kind: .string, defaultValue: .string(""),
                help:
                    "Serve the read-only console (pages of plants, buttons, devices, dead letters and health for a browser) here (HOST:PORT, or a port on 127.0.0.1); open on loopback, beyond it only with the operator's account of the broker Trellis starts; empty: off.",
                reloadable: false,
                check: { content in
                    guard case let .string(value) = content, !value.isEmpty, ListenAddress(value) == nil else {
                        return nil
                    }
                    return ListenAddress.expected + ", or empty"
                }),
            SettingKey(
                key: "http.header_timeout", kind: .double, defaultValue: .double(ConnectionLimits.probes.headerTimeout),
                help:
                    "Seconds a new connection to any of the HTTP servers (metrics, health, console, Socket.IO) may take to send its first request head; then it is closed.",
                reloadable: false, check: positive),
            SettingKey(
                key: "http.body_timeout", kind: .double, defaultValue: .double(ConnectionLimits.probes.bodyTimeout),
                help:
                    "Seconds an HTTP request may take to send its body, from its head; then the connection is closed.",
                reloadable: false, check: positive),
            SettingKey(
                key: "http.idle_timeout", kind: .double, defaultValue: .double(ConnectionLimits.probes.idleTimeout),
                help:
                    "Seconds a kept-alive HTTP connection may wait between requests before it is closed; a request in progress (a long poll) and a WebSocket are never cut by it.",
                reloadable: false, check: positive),
            SettingKey(
                key: "http.max_connections", kind: .int, defaultValue: .int(ConnectionLimits.probes.maximumConnections),
                help:
                    "Most connections at once to the metrics server, to the health server, and to the console, each; beyond, a new one replaces the one waiting longest for its first request, or is closed at once.",
                reloadable: false, check: positive),
            SettingKey(
                key: "http.allowed_hosts", kind: .string, defaultValue: .string(""),
                help:
                    "Host names (comma-separated; * for any) web pages may reach the HTTP servers by, besides IP addresses and localhost; a page's request for another Host is refused with 421 (DNS rebinding).",
                reloadable: false,
                check: { content in
                    guard case let .string(value) = content, case let .failure(error) = HostPolicy.parse(value) else {
                        return nil
                    }
                    return "host names separated by commas (\(error))"
                }),
            SettingKey(
                key: "log.level", flag: "log-level", kind: .string, defaultValue: .string("info"),
                help: "Least severe log level: trace, debug, info, notice, warning, error or critical.",
                reloadable: true,
                check: oneOf(["trace", "debug", "info", "notice", "warning", "error", "critical"])),
            SettingKey(
                key: "log.format", flag: "log-format", kind: .string, defaultValue: .string("text"),
                help: "Log line format on standard error: text or json.", reloadable: false,
                check: oneOf(["text", "json"]))
        ]
    }()

    package static let byKey: [String: SettingKey] = Dictionary(uniqueKeysWithValues: all.map { ($0.key, $0) })
}
