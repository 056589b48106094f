import ArgumentParser
import Logging
import TrellisRelay

/// `--log-level`, shared by every command that logs.
struct LoggingOptions: ParsableArguments {
    @Option(name: .long, help: "Least severe log level shown: trace, debug, info, notice, warning, error or critical.")
    var logLevel: Logger.Level = .info

    @Option(name: .long, help: "Log line format on standard error: text, or json (one object per line).")
    var logFormat: LogFormat = .text

    enum LogFormat: String, ExpressibleByArgument, CaseIterable {
        case text, json
    }

    /// Sends logs to standard error at the chosen level and returns the root logger.
    func bootstrap(label: String = "trellis") -> Logger {
        let level = logLevel
        let format = logFormat
        LoggingSystem.bootstrap { name in
            switch format {
            case .json:
                return JSONLogHandler(label: name, level: level)
            case .text:
                var handler = StreamLogHandler.standardError(label: name)
                handler.logLevel = level
                return handler
            }
        }
        return Logger(label: label)
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}
