import ArgumentParser
import TrellisApplication

/// `trellis notify`: the notification channels (docs/notifications.md).
struct NotifyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "notify",
        abstract: "Try the notification channels of the configuration.",
        subcommands: [Test.self])

    /// `trellis notify test CHANNEL`: sends one notification through the channel.
    struct Test: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Send one test notification through a channel and say what happened.",
            discussion: """
                Reads the channel from the configuration `trellis run` reads (the file's notifications: section), \
                its secret from its file, and sends one notification straight to it, not through the outbox. \
                Exits 0 when the channel took it; 1 with the reason when it did not.
                """)

        @Argument(help: "The channel's name under notifications.channels.")
        var channel: String

        @OptionGroup var configFile: ConfigFileOption

        func run() async throws {
            print(try await NotificationTest.run(try await configFile.read(), channel: channel))
        }
    }
}
