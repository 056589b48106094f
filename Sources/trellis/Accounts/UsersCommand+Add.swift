import TrellisApplication
import ArgumentParser
import Foundation
import TrellisBroker
import TrellisCore

extension UsersCommand {
    /// `trellis users add`: an account of one role, with its password.
    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add an account, or change its password and role.",
            discussion: """
                Each account gets exactly its role's row of the topic table (docs/security.md). Without a role flag \
                the account is a client (an app; the plugin's role `app`): it may publish rpi/torpi/NAME, \
                p2o/clients/NAME/{status,register,unregister} and trellis/clients/NAME/request/…, and read its own \
                replies, trellis/status and p2o/buttons/+/state. A button, a device and a sensor node get their own \
                topics alone. Without --password or --password-stdin a random password is generated and printed \
                once. With dynamic security the account can log in as soon as this returns.
                """
        )

        @Argument(help: "The user name (also its MQTT client id): 1–64 characters, no '/', '+', '#', ':' or spaces.")
        var name: String

        @Flag(
            name: .long,
            help:
                "A button: may publish p2o/buttons/NAME/press and read the buttons' states and trellis/status, nothing else."
        )
        var button = false
        @Flag(
            name: .long,
            help:
                "A device: may publish devices/NAME/{status,telemetry,log} and read devices/NAME/{info,command} (Trellis alone writes those two) and trellis/status, nothing else."
        )
        var device = false
        @Option(
            name: .long, parsing: .upToNextOption,
            help: ArgumentHelp(
                "A sensor node: may publish only the readings of these sensors, rpi/sensors/ADDRESS, and read trellis/status (I2C addresses such as 0x36, written as 0x and two lowercase hex digits in the topic).",
                valueName: "address"))
        var sensor: [String] = []
        @Flag(
            name: .long,
            help:
                "An operator: may send Trellis every request and event (the shared trellis/request/… topics among them) and read every topic, but not publish what Trellis publishes."
        )
        var `operator` = false
        @Flag(
            name: .long,
            help:
                "Home Assistant: may read the discovery configs (homeassistant/#) and the states they name (buttons, plants, alerts, devices' records, trellis/status and trellis/stats), publish its birth message homeassistant/status and trellis/request/devices/restart (each device's restart button), nothing else. Give Home Assistant's MQTT integration this account rather than an operator's."
        )
        var homeAssistant = false
        @Flag(
            name: .long,
            help:
                "Trellis's own account: reads and writes every topic. Its password is also written to --trellis-password-file."
        )
        var trellis = false

        @OptionGroup var passwordInput: PasswordInput

        @Option(
            name: .long,
            help: ArgumentHelp(
                "Where the password of a --trellis account is written, for `trellis run --password-file`.",
                valueName: "file"))
        var trellisPasswordFile = "trellis-state/trellis.password"

        @OptionGroup var options: Options

        func validate() throws {
            if [button, device, homeAssistant, `operator`, trellis, !sensor.isEmpty].filter({ $0 }).count > 1 {
                throw ValidationError(
                    "choose at most one of --button, --device, --sensor, --home-assistant, --operator and --trellis")
            }
            for address in sensor where SensorAddress.normalize(address) == nil {
                throw ValidationError(
                    "'\(address)' is not a sensor address: write 0x and one or two hex digits, 0x03 to 0x77")
            }
            try Self.validate(name: name)
        }

        /// A user name Mosquitto and the topics can carry.
        static func validate(name: String) throws {
            if case let .failure(error) = ButtonIdentifier.validate(name, kind: "user name") {
                throw ValidationError(error.message)
            }
            if name.contains(":") || name.contains(" ") {
                throw ValidationError("the user name may contain neither ':' nor spaces")
            }
        }

        var role: AccessControlList.Role {
            button
                ? .button
                : device
                    ? .device
                    : !sensor.isEmpty
                        ? .sensor
                        : homeAssistant ? .homeassistant : `operator` ? .operator : trellis ? .trellis : .client
        }

        func run() async throws {
            try options.checkNotAdmin(name)
            // Before anything is written: a configuration that does not read changes nothing.
            let topics = try await options.settings.prefixes()
            let addresses = AccountChanges.sensorAddresses(sensor)
            let (secret, generated) = try passwordInput.resolve()
            let store = options.store(topics: topics)
            try await AccountChanges.add(
                name, role: role, sensors: addresses, password: secret,
                trellisPasswordFile: trellis ? trellisPasswordFile : nil, in: store)
            let text = ([role.rawValue] + addresses).joined(separator: " ")
            let effect = options.usesDynamicSecurity ? ", \(store.effect)" : ""
            print("added \(name) (\(text))\(effect)" + (generated ? "; password: \(secret)" : ""))
        }
    }
}
