import ArgumentParser
import Configuration
import Foundation
import Logging
import ServiceLifecycle
import TrellisBroker
import TrellisMQTT
import TrellisRelay
import TrellisServer
import TrellisStore

/// `trellis run`: starts (or joins) a broker and runs the relay until SIGINT/SIGTERM.
struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run the relay, starting its own Mosquitto unless a broker address is given.",
        discussion: """
            Without --broker, Trellis starts `mosquitto -c broker.conf` (the file in the working directory, \
            another with --broker-config, or the embedded default when neither exists), waits until it accepts \
            connections, and stops it on shutdown. With --broker it uses that broker and starts none; an unreachable \
            broker is retried with backoff.

            Broker addresses: mqtt://HOST[:PORT] (port 1883), mqtts://HOST[:PORT] (TLS, port 8883), or HOST:PORT; \
            an IPv6 address goes in brackets (mqtts://[::1]:8883). mqtts:// always verifies the broker's certificate \
            and host name, against the system's CAs or --tls-ca, and speaks TLS 1.2 or later; --tls-cert and \
            --tls-key present a client certificate. A user name and password may come from the address \
            (mqtts://trellis:secret@broker.example; percent-encode @ : / in them), from --username and \
            --password-file, or from TRELLIS_PASSWORD; they are never logged. A TLS file that cannot be read stops \
            Trellis at once; a refused certificate is logged with its reason and retried. See docs/tls.md.

            Every setting can also come from a YAML file (--config, default trellis.yaml when present) and from \
            TRELLIS_… environment variables; flags win over the environment, which wins over the file. \
            `trellis config check` shows the effective values and their sources; trellis.example.yaml lists them all, \
            and docs/configuration.md in the source tree describes each.

            Trellis publishes the retained `trellis/status` (`online`, or `offline` as its will and at shutdown), \
            the retained `trellis/stats`, and every rejected message on `trellis/deadletter`. SIGHUP (or a change of \
            the file with --watch-config) re-reads the configuration and applies limits, names, prefixes and the log \
            level without dropping the connection. SIGINT or SIGTERM stop it gracefully: it stops taking messages, \
            finishes the one in hand, flushes its state, publishes `offline`, disconnects, stops its broker and exits 0.
            """
    )

    @Option(name: .long, help: ArgumentHelp("YAML configuration file (default: trellis.yaml when present).", valueName: "file"))
    var config: String?

    @Flag(name: .long, help: "Also reload when the configuration file changes (checked every second).")
    var watchConfig = false

    @Option(name: .long, help: ArgumentHelp("Use the broker at this address instead of starting one: mqtt://HOST[:PORT] (port 1883), mqtts://HOST[:PORT] (TLS, port 8883) or HOST:PORT; IPv6 in brackets; user:password@ before the host logs in. [broker.address]", valueName: "url"))
    var broker: String?

    @Option(name: .long, help: ArgumentHelp("With mqtts://: the CAs (PEM file, or directory of hashed PEM files) that may sign the broker's certificate (default: the system's CAs). [broker.tls.ca]", valueName: "file|dir"))
    var tlsCa: String?

    @Option(name: .long, help: ArgumentHelp("With mqtts://: client certificate (PEM) for brokers that require one. [broker.tls.cert]", valueName: "file"))
    var tlsCert: String?

    @Option(name: .long, help: ArgumentHelp("With mqtts://: the client certificate's private key (PEM, unencrypted). [broker.tls.key]", valueName: "file"))
    var tlsKey: String?

    @Option(name: .long, help: ArgumentHelp("Mosquitto configuration for the broker Trellis starts. [broker.config]", valueName: "file"))
    var brokerConfig: String?

    @Option(name: .long, help: ArgumentHelp("Directory of Trellis's SQLite state, created if missing (default trellis-state). [state.dir]", valueName: "dir"))
    var state: String?

    @Option(name: .long, help: ArgumentHelp("Keep the state in PostgreSQL instead of SQLite in --state: postgres://user[:password]@host[:port]/database[?sslmode=require]; several relays may share it (see docs/scaling-out.md). Give a URL with a password in TRELLIS_STATE_STORE or the configuration file, where other users' ps cannot read it. [state.store]", valueName: "url"))
    var store: String?

    @Option(name: .long, help: ArgumentHelp("Share the load with the other relays of GROUP: every request and event filter is subscribed as $share/GROUP/<filter>, so each message reaches one relay; each relay needs its own --client-id and the same --store. [broker.share_group]", valueName: "group"))
    var share: String?

    @Option(name: .long, help: "MQTT client id (default trellis); its persistent session keeps QoS 1 messages sent while Trellis is stopped. [broker.client_id]")
    var clientId: String?

    @Option(name: .long, help: "User name to log in to the broker with (default: the address's user info). [broker.username]")
    var username: String?

    @Option(name: .long, help: ArgumentHelp("File whose first line is the broker password (else the address's user info, else TRELLIS_PASSWORD). [broker.password_file]", valueName: "file"))
    var passwordFile: String?

    @Option(name: .long, help: "Messages read ahead of the handlers, acknowledged only once handled (default 32). [broker.max_unhandled]")
    var maxUnhandled: Int?

    @Option(name: .long, help: "The plant tracker host's name, the sender of its replies (default Host-RPI3B+). [plant.host_name]")
    var hostName: String?

    @Option(name: .long, help: "Topic prefix of the plant tracker (default rpi). [plant.prefix]")
    var plantPrefix: String?

    @Option(name: .long, help: ArgumentHelp("Dialect of the shared plant topics rpi/torpi → rpi/fromrpi: original (the released iPhone app's, default) or lossless. Per-client topics are always lossless. [plant.dialect]", valueName: "dialect"))
    var plantDialect: String?

    @Option(name: .long, help: "Most plants the tracker keeps (default 7). [plant.max_plants]")
    var maxPlants: Int?

    @Option(name: .long, help: ArgumentHelp("Plants to add at start when absent, one per line as `name,sensor[,sensor…]` (e.g. `Fern,0x36`); `#` starts a comment. [plant.plants_file]", valueName: "file"))
    var plantsFile: String?

    @Option(name: .long, help: "Topic prefix of the button service (default p2o). [buttons.prefix]")
    var buttonPrefix: String?

    @Option(name: .long, help: ArgumentHelp("Serve the button service to Socket.IO clients (the P2O apps) on /socket.io/ at HOST:PORT, or at a port on 127.0.0.1 (off by default; the apps use 3001). [buttons.socketio_address]", valueName: "address"))
    var socketio: String?

    @Option(name: .long, help: "Most Socket.IO sessions at once (default 10000). [buttons.socketio_max_sessions]")
    var socketioMaxSessions: Int?

    @Option(name: .long, help: "Most Socket.IO sessions one remote address may hold at once; 0: no limit, as behind a reverse proxy (default 100). [buttons.socketio_max_sessions_per_address]")
    var socketioMaxSessionsPerAddress: Int?

    @Option(name: .long, help: ArgumentHelp("Allow presses over Socket.IO from clients that present the token in this file (`?token=` on the handshake, or `auth: {token}` in Socket.IO 5); without it presses over Socket.IO are refused, as the P2O apps only listen. [buttons.socketio_press_token_file]", valueName: "file"))
    var socketioPressTokenFile: String?

    @Option(name: .long, help: "Most messages one sender may send within the spam window (default 15). [spam.limit]")
    var spamLimit: Int?

    @Option(name: .long, help: "Length of the spam window in seconds (default 15). [spam.window]")
    var spamWindow: Double?

    @Option(name: .long, help: "Most devices in the fleet registry (default 100000). [devices.max_devices]")
    var maxDevices: Int?

    @Option(name: .long, help: "Log entries kept per device (default 200). [devices.log_limit]")
    var deviceLogLimit: Int?

    @Option(name: .long, help: "Largest device or agent code of a model build, in bytes (default 1048576). [devices.max_code_bytes]")
    var maxCodeBytes: Int?

    @Option(name: .long, help: ArgumentHelp("Clients, comma-separated, that may change the fleet on their per-client JSON topics. [devices.operators]", valueName: "clients"))
    var operators: String?

    @Flag(name: .long, help: "Secure profile: honour a v5 Response Topic only inside the requester's own reply topics. [security.restrict_response_topics]")
    var secure = false

    @Option(name: .long, help: "Seconds between two publications of the retained trellis/stats (default 10). [stats.interval]")
    var statsInterval: Double?

    @Option(name: .long, help: ArgumentHelp("Serve Prometheus /metrics, and the probes /livez and /readyz, at HOST:PORT, or at a port on 127.0.0.1 (off by default). [metrics.address]", valueName: "address"))
    var metrics: String?

    @Option(name: .long, help: ArgumentHelp("Serve the probes /livez and /readyz at HOST:PORT, or at a port on 127.0.0.1, whether or not metrics are (off by default; `trellis health` asks them). [health.address]", valueName: "address"))
    var health: String?

    @Option(name: .long, help: "Least severe log level: trace, debug, info, notice, warning, error or critical (default info). [log.level]")
    var logLevel: String?

    @Option(name: .long, help: "Log line format on standard error: text or json (default text). [log.format]")
    var logFormat: String?

    /// The settings given as flags, by configuration key.
    var flagValues: [String: ConfigContent] {
        var values: [String: ConfigContent] = [:]
        func put(_ key: String, _ value: ConfigContent?) { if let value { values[key] = value } }
        put("broker.address", broker.map { .string($0) })
        put("broker.tls.ca", tlsCa.map { .string($0) })
        put("broker.tls.cert", tlsCert.map { .string($0) })
        put("broker.tls.key", tlsKey.map { .string($0) })
        put("broker.config", brokerConfig.map { .string($0) })
        put("broker.client_id", clientId.map { .string($0) })
        put("broker.username", username.map { .string($0) })
        put("broker.password_file", passwordFile.map { .string($0) })
        put("broker.max_unhandled", maxUnhandled.map { .int($0) })
        put("state.dir", state.map { .string($0) })
        put("state.store", store.map { .string($0) })
        put("broker.share_group", share.map { .string($0) })
        put("plant.host_name", hostName.map { .string($0) })
        put("plant.prefix", plantPrefix.map { .string($0) })
        put("plant.dialect", plantDialect.map { .string($0) })
        put("plant.max_plants", maxPlants.map { .int($0) })
        put("plant.plants_file", plantsFile.map { .string($0) })
        put("buttons.prefix", buttonPrefix.map { .string($0) })
        put("buttons.socketio_address", socketio.map { .string($0) })
        put("buttons.socketio_max_sessions", socketioMaxSessions.map { .int($0) })
        put("buttons.socketio_max_sessions_per_address", socketioMaxSessionsPerAddress.map { .int($0) })
        put("buttons.socketio_press_token_file", socketioPressTokenFile.map { .string($0) })
        put("spam.limit", spamLimit.map { .int($0) })
        put("spam.window", spamWindow.map { .double($0) })
        put("devices.max_devices", maxDevices.map { .int($0) })
        put("devices.log_limit", deviceLogLimit.map { .int($0) })
        put("devices.max_code_bytes", maxCodeBytes.map { .int($0) })
        put("devices.operators", operators.map { .string($0) })
        put("security.restrict_response_topics", secure ? .bool(true) : nil)
        put("stats.interval", statsInterval.map { .double($0) })
        put("metrics.address", metrics.map { .string($0) })
        put("health.address", health.map { .string($0) })
        put("log.level", logLevel.map { .string($0) })
        put("log.format", logFormat.map { .string($0) })
        return values
    }

    func validate() throws {
        if broker != nil && brokerConfig != nil {
            throw ValidationError("--broker and --broker-config exclude each other: Trellis either joins a broker or starts one")
        }
    }

    func run() async throws {
        let configuration: EffectiveConfiguration
        do {
            configuration = try await EffectiveConfiguration.load(file: config, flags: flagValues)
        } catch {
            throw fail("the configuration is not valid, so Trellis does not start:\n" +
                       error.problems.map { "  - \($0)" }.joined(separator: "\n"))
        }
        let logger = TrellisLogging.bootstrap(level: configuration.string("log.level"), format: configuration.string("log.format"))
        if !configuration.string("metrics.address").isEmpty { MetricsServer.bootstrap() }
        do {
            try await serve(configuration, logger: logger)
        } catch let error as MosquittoProcess.StartError {
            throw fail("\(error)")
        } catch let error as StoreError where error.code == .cannotOpen {
            throw fail("\(error); Trellis does not start and leaves the state as it is")
        } catch let error as StoreError {
            throw fail("\(error)")
        } catch let error as PlantsFileError {
            throw fail("\(error)")
        } catch let error as CredentialsError {
            throw fail("\(error)")
        } catch let error as SocketIOServer.PressTokenError {
            throw fail("\(error)")
        }
    }
}
