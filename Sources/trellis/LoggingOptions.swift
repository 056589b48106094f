import ArgumentParser
import Logging

/// `--log-level`, shared by every command that logs.
struct LoggingOptions: ParsableArguments {
    @Option(name: .long, help: "Least severe log level shown: trace, debug, info, notice, warning, error or critical.")
    var logLevel: Logger.Level = .info

    /// Sends logs to standard error at the chosen level and returns the root logger.
    func bootstrap(label: String = "trellis") -> Logger {
        let level = logLevel
        LoggingSystem.bootstrap { name in
            var handler = StreamLogHandler.standardError(label: name)
            handler.logLevel = level
            return handler
        }
        return Logger(label: label)
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}
