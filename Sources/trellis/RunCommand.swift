import ArgumentParser
import Configuration
import Foundation
import Logging
import ServiceLifecycle
import TrellisApplication
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

            When the broker it starts has a password_file and an acl_file (the shipped broker.conf does) and no \
            --username is given, Trellis keeps two accounts there: its own, trellis, which it logs in with, and the \
            local operator's, operator; their passwords are in the state directory (trellis.password, \
            operator.password, mode 0600), and the operator's also as Mosquitto's client option files in \
            STATE/mosquitto-clients (export XDG_CONFIG_HOME to it and mosquitto_pub, mosquitto_sub and mosquitto_rr \
            log in as the operator). It writes the ACL anew from its topic table at every start: clients without \
            an account get the released plant-tracker app's rpi/torpi and rpi/fromrpi alone (docs/security.md).

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

    @Option(
        name: .long,
        help: ArgumentHelp("YAML configuration file (default: trellis.yaml when present).", valueName: "file"))
    var config: String?

    @Flag(name: .long, help: "Also reload when the configuration file changes (checked every second).")
    var watchConfig = false

    @Option(name: .long, help: .setting("broker.address", valueName: "url"))
    var broker: String?

    @Option(name: .long, help: .setting("broker.tls.ca", valueName: "file|dir"))
    var tlsCa: String?

    @Option(name: .long, help: .setting("broker.tls.cert", valueName: "file"))
    var tlsCert: String?

    @Option(name: .long, help: .setting("broker.tls.key", valueName: "file"))
    var tlsKey: String?

    @Option(name: .long, help: .setting("broker.config", valueName: "file"))
    var brokerConfig: String?

    @Option(name: .long, help: .setting("state.dir", valueName: "dir"))
    var state: String?

    @Option(name: .long, help: .setting("state.store", valueName: "url"))
    var store: String?

    @Option(name: .long, help: .setting("broker.share_group", valueName: "group"))
    var share: String?

    @Option(name: .long, help: .setting("broker.client_id"))
    var clientId: String?

    @Option(name: .long, help: .setting("broker.username"))
    var username: String?

    @Option(name: .long, help: .setting("broker.password_file", valueName: "file"))
    var passwordFile: String?

    @Option(name: .long, help: .setting("broker.max_unhandled"))
    var maxUnhandled: Int?

    @Option(name: .long, help: .setting("broker.max_packet_bytes"))
    var maxPacketBytes: Int?

    @Option(name: .long, help: .setting("plant.host_name"))
    var hostName: String?

    @Option(name: .long, help: .setting("plant.prefix"))
    var plantPrefix: String?

    @Option(name: .long, help: .setting("plant.dialect", valueName: "dialect"))
    var plantDialect: String?

    @Option(name: .long, help: .setting("plant.max_plants"))
    var maxPlants: Int?

    @Option(name: .long, help: .setting("plant.plants_file", valueName: "file"))
    var plantsFile: String?

    @Option(name: .long, help: .setting("buttons.prefix"))
    var buttonPrefix: String?

    @Option(name: .long, help: .setting("buttons.socketio_address", valueName: "address"))
    var socketio: String?

    @Option(name: .long, help: .setting("buttons.socketio_max_sessions"))
    var socketioMaxSessions: Int?

    @Option(name: .long, help: .setting("buttons.socketio_max_sessions_per_address"))
    var socketioMaxSessionsPerAddress: Int?

    @Option(name: .long, help: .setting("buttons.socketio_press_token_file", valueName: "file"))
    var socketioPressTokenFile: String?

    @Option(name: .long, help: .setting("buttons.socketio_allowed_origins", valueName: "origins"))
    var socketioAllowedOrigins: String?

    @Option(name: .long, help: .setting("spam.limit"))
    var spamLimit: Int?

    @Option(name: .long, help: .setting("spam.window"))
    var spamWindow: Double?

    @Option(name: .long, help: .setting("devices.max_devices"))
    var maxDevices: Int?

    @Option(name: .long, help: .setting("devices.log_limit"))
    var deviceLogLimit: Int?

    @Option(name: .long, help: .setting("devices.max_code_bytes"))
    var maxCodeBytes: Int?

    @Option(name: .long, help: .setting("devices.operators", valueName: "clients"))
    var operators: String?

    @Flag(name: .long, help: .setting("security.restrict_response_topics"))
    var secure = false

    @Option(name: .long, help: .setting("stats.interval"))
    var statsInterval: Double?

    @Option(name: .long, help: .setting("metrics.address", valueName: "address"))
    var metrics: String?

    @Option(name: .long, help: .setting("health.address", valueName: "address"))
    var health: String?

    @Option(name: .long, help: .setting("console.address", valueName: "address"))
    var console: String?

    @Option(name: .long, help: .setting("log.level"))
    var logLevel: String?

    @Option(name: .long, help: .setting("log.format"))
    var logFormat: String?

    /// The settings given as flags, by configuration key (``SettingFlags``).
    var flagValues: [String: ConfigContent] { SettingFlags.values(of: self) }

    func validate() throws {
        if broker != nil && brokerConfig != nil {
            throw ValidationError(
                "--broker and --broker-config exclude each other: Trellis either joins a broker or starts one")
        }
    }

    func run() async throws {
        let configuration = try await EffectiveConfiguration.forCommand(
            file: config, flags: flagValues, refusal: "the configuration is not valid, so Trellis does not start")
        let logger = TrellisLogging.bootstrap(
            level: configuration.string("log.level"), format: configuration.string("log.format"))
        if !configuration.string("metrics.address").isEmpty { MetricsServer.bootstrap() }
        do {
            try await TrellisApplication.launch(
                configuration, flags: flagValues, watchConfig: watchConfig, logger: logger)
        } catch {
            throw TrellisApplication.failure(of: error)
        }
    }
}
