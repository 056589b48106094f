import ArgumentParser
import Foundation
import TrellisApplication
import TrellisCore

/// The `trellis` command line.
@main
struct TrellisCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trellis",
        abstract: "A headless MQTT relay for small IoT systems: plant tracker, buttons, and more, over Mosquitto.",
        discussion: """
            Trellis subscribes to request and event topics on a Mosquitto broker, validates every message, \
            answers, keeps the state that must survive a restart in SQLite, and republishes.

            Start it with its own broker:  trellis run
            Use a broker already running:  trellis run --broker 127.0.0.1:1883
            Watch it:                      mosquitto_sub -h 127.0.0.1 -t 'trellis/#' -v

            `trellis <command> --help` lists a command's options. The full reference is in the source tree: \
            README.md for a two-minute tour, docs/README.md for the index of every service's protocol, the \
            configuration keys (docs/configuration.md), operation and the secure profile (docs/operations.md).
            """,
        version: TrellisVersion.description,
        subcommands: [
            RunCommand.self, HealthCommand.self, ConfigCommand.self, UsersCommand.self, RecordCommand.self,
            ReplayCommand.self, CaptureCommand.self, CatalogCommand.self, StoreCommand.self, DeadLettersCommand.self,
            PlantsCommand.self, BridgeCommand.self, NotifyCommand.self, WatchCommand.self, TraceCommand.self
        ],
        defaultSubcommand: nil
    )

    /// Runs the command the arguments name. A ``CommandFailure`` is printed once, as
    /// `trellis: error: …` on standard error, and exits 1; anything else as ArgumentParser does.
    static func main() async {
        do {
            var command = try parseAsRoot()
            if var command = command as? any AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
        } catch let failure as CommandFailure {
            FileHandle.standardError.write(Data("trellis: error: \(failure.description)\n".utf8))
            exit(withError: ExitCode.failure)
        } catch {
            exit(withError: error)
        }
    }
}
