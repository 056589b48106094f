import ArgumentParser
import Foundation
import Logging
import ServiceLifecycle
import TrellisBroker
import TrellisMQTT
import TrellisRelay
import TrellisStore

/// `trellis run`: starts (or joins) a broker and runs the relay until SIGINT/SIGTERM.
struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run the relay, starting its own Mosquitto unless --broker is given.",
        discussion: """
            Without --broker, Trellis starts `mosquitto -c broker.conf` (the file in the working directory, \
            another with --broker-config, or the embedded default when neither exists), waits until it accepts \
            connections, and stops it on shutdown. With --broker HOST:PORT it uses that broker and starts none; \
            an unreachable broker is retried with backoff.

            Trellis publishes the retained `trellis/status` (`online`, or `offline` as its will and at shutdown) \
            and every rejected message on `trellis/deadletter`. SIGINT or SIGTERM stop it gracefully: it \
            publishes `offline`, flushes its state, disconnects, stops its broker and exits 0.
            """
    )

    @Option(name: .long, help: ArgumentHelp("Use the broker at HOST:PORT (for example 127.0.0.1:1883) instead of starting one.", valueName: "host:port"))
    var broker: String?

    @Option(name: .long, help: ArgumentHelp("Mosquitto configuration for the broker Trellis starts.", valueName: "file"))
    var brokerConfig: String?

    @Option(name: .long, help: ArgumentHelp("Directory of Trellis's SQLite state (created if missing).", valueName: "dir"))
    var state: String = "trellis-state"

    @Option(name: .long, help: "MQTT client id; with a persistent session, QoS 1 messages sent while Trellis is stopped are delivered when it returns.")
    var clientId: String = "trellis"

    @Option(name: .long, help: "The plant tracker host's name, the `sender` of its replies.")
    var hostName: String = RelaySettings().hostName

    @Option(name: .long, help: "Topic prefix of the plant tracker (rpi/torpi, rpi/fromrpi, rpi/sensors).")
    var plantPrefix: String = RelaySettings().plantPrefix

    @Option(name: .long, help: "Topic prefix of the button service (p2o/buttons, p2o/clients).")
    var buttonPrefix: String = RelaySettings().buttonPrefix

    @Option(name: .long, help: "Most messages one sender may send within --spam-window seconds.")
    var spamLimit: Int = RelaySettings().spamLimit

    @Option(name: .long, help: "Length of the spam window, in seconds.")
    var spamWindow: Double = RelaySettings().spamWindow

    @Option(name: .long, help: "Most plants the tracker keeps.")
    var maxPlants: Int = RelaySettings().maxPlants

    @Option(name: .long, help: ArgumentHelp("Plants to add at start when absent, one per line as `name,sensor[,sensor…]` (e.g. `Fern,0x36`); `#` starts a comment.", valueName: "file"))
    var plantsFile: String?

    @Option(name: .long, help: "Messages read from the broker but not yet handled. libmosquitto acknowledges a QoS 1 message when it reads it, so if Trellis is killed at most this many acknowledged messages are lost; more reads ahead and may be faster.")
    var maxUnhandled: Int = 1

    @Option(name: .long, help: "Seconds between two publications of the retained trellis/stats.")
    var statsInterval: Double = RelaySettings().statsInterval

    @Option(name: .long, help: "User name to log in to the broker with (the secure profile's `trellis` account).")
    var username: String?

    @Option(name: .long, help: ArgumentHelp("File whose first line is the broker password (environment: TRELLIS_PASSWORD).", valueName: "file"))
    var passwordFile: String?

    @Flag(name: .long, help: "Secure profile: honour a v5 Response Topic only inside the requester's own reply topics.")
    var secure = false

    @OptionGroup var logging: LoggingOptions

    func validate() throws {
        if let broker, BrokerAddress(parsing: broker) == nil {
            throw ValidationError("--broker must be HOST:PORT, for example 127.0.0.1:1883 (got '\(broker)')")
        }
        if broker != nil && brokerConfig != nil {
            throw ValidationError("--broker and --broker-config exclude each other: Trellis either joins a broker or starts one")
        }
        guard spamLimit > 0, spamWindow > 0 else { throw ValidationError("--spam-limit and --spam-window must be positive") }
        guard maxPlants > 0 else { throw ValidationError("--max-plants must be positive") }
        guard statsInterval > 0 else { throw ValidationError("--stats-interval must be positive") }
        guard maxUnhandled > 0 else { throw ValidationError("--max-unhandled must be at least 1") }
    }

    func run() async throws {
        let logger = logging.bootstrap()
        do {
            try await serve(logger: logger)
        } catch let error as MosquittoProcess.StartError {
            throw fail("\(error)")
        } catch let error as StoreError {
            throw fail("\(error)")
        } catch let error as PlantsFileError {
            throw fail("\(error)")
        } catch let error as CredentialsError {
            throw fail("\(error)")
        }
    }

    var settings: RelaySettings {
        var settings = RelaySettings()
        settings.hostName = hostName
        settings.plantPrefix = plantPrefix
        settings.buttonPrefix = buttonPrefix
        settings.spamLimit = spamLimit
        settings.spamWindow = spamWindow
        settings.maxPlants = maxPlants
        settings.restrictResponseTopics = secure
        settings.statsInterval = statsInterval
        return settings
    }
}
