import Configuration
import Foundation
import Logging
import ServiceLifecycle
import Synchronization
import TrellisCore
import TrellisRelay
import UnixSignals

/// Re-reads the configuration on SIGHUP (and when `ConfigWatcher` sees the file change) and
/// applies what can change while running: limits, names, prefixes (resubscribing), the stats
/// interval and the log level. An invalid file is refused and the running configuration stays.
/// Every reload is logged and published once on `trellis/events`.
package final class ConfigReloader: Service, Sendable {
    private let current: Mutex<EffectiveConfiguration>
    /// The configuration the relay started with: what is in force of the settings a reload does not
    /// change (`broker.max_packet_bytes`, …), which the reloaded ones must agree with.
    private let started: EffectiveConfiguration
    private let flags: [String: ConfigContent]
    private let relay: RelayService
    private let logger: Logger

    package init(
        configuration: EffectiveConfiguration, flags: [String: ConfigContent], relay: RelayService, logger: Logger
    ) {
        self.current = Mutex(configuration)
        self.started = configuration
        self.flags = flags
        self.relay = relay
        self.logger = logger
    }

    package func run() async throws {
        let signals = await UnixSignalsSequence(trapping: .sighup)
        for await _ in signals.cancelOnGracefulShutdown() {
            await reload(reason: "SIGHUP")
        }
    }

    /// Loads the configuration again and applies it, or refuses it.
    package func reload(reason: String) async {
        let old = current.withLock { $0 }
        let new: EffectiveConfiguration
        do throws(EffectiveConfiguration.Invalid) {
            new = try await EffectiveConfiguration.load(file: old.file, flags: flags)
            // A setting that needs a restart keeps its running value: the checks between keys hold for that.
            let problems = new.inForce(over: started).brokerProblems()
            if !problems.isEmpty {
                throw EffectiveConfiguration.Invalid(
                    problems: problems.map { "with the settings that need a restart as they run until one: \($0)" })
            }
        } catch {
            logger.error(
                "configuration refused; the running one stays",
                metadata: ["reason": "\(reason)", "problems": "\(error.problems.joined(separator: "; "))"])
            publish(ReloadEvent(event: "config_refused", trigger: reason, problems: error.problems))
            return
        }
        let changes = new.changes(from: old)
        let needRestart = changes.filter { SettingKey.byKey[$0.key]?.reloadable == false }.map(\.key)
        do {
            var settings = new.relaySettings
            // Not reloadable: the id the relay connected with stays (``ClientIDFile``'s when none is named).
            settings.clientID = relay.engine.settings.clientID
            let (removed, added) = try await relay.apply(settings)
            TrellisLogging.setLevel(new.string("log.level"))
            current.withLock { $0 = new }
            logger.notice(
                "configuration reloaded",
                metadata: [
                    "reason": "\(reason)",
                    "changed": "\(changes.map { "\($0.key): \($0.old) → \($0.new)" }.joined(separator: ", "))",
                    "unsubscribed": "\(removed)", "subscribed": "\(added)"
                ])
            if !needRestart.isEmpty {
                logger.warning("these settings apply only after a restart", metadata: ["keys": "\(needRestart)"])
            }
            publish(
                ReloadEvent(
                    event: "config_reloaded", trigger: reason,
                    changes: changes.map { .init(key: $0.key, from: $0.old, to: $0.new) },
                    restartNeeded: needRestart))
        } catch {
            logger.error("could not apply the new configuration: \(error)")
            publish(ReloadEvent(event: "config_refused", trigger: reason, problems: ["\(error)"]))
        }
    }

    private func publish(_ event: ReloadEvent) {
        var event = event
        event.time = ISO8601Time.format(Date())
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let payload = try? encoder.encode(event) else { return }
        let topic = "\(relay.engine.settings.trellisPrefix)/events"
        do {
            try relay.client.publish(topic: topic, payload: Array(payload), qos: .atLeastOnce)
        } catch {
            logger.warning("could not publish the reload event: \(error)")
        }
    }

    /// The `trellis/events` document of one reload.
    package struct ReloadEvent: Encodable {
        struct Change: Encodable { var key, from, to: String }
        var event: String
        var trigger: String
        var changes: [Change]?
        var restartNeeded: [String]?
        var problems: [String]?
        var time = ""

        enum CodingKeys: String, CodingKey {
            case event, trigger, changes, problems, time
            case restartNeeded = "restart_needed"
        }
    }
}

/// `--watch-config`: swift-configuration's reloading YAML provider polls the file every second;
/// each new snapshot triggers the same reload as SIGHUP.
package struct ConfigWatcher: Service {
    package let provider: ReloadingFileProvider<SettingsYAMLSnapshot>
    package let reloader: ConfigReloader
    package let logger: Logger

    package init(file: String, reloader: ConfigReloader, logger: Logger) async throws {
        provider = try await ReloadingFileProvider<SettingsYAMLSnapshot>(
            filePath: .init(file), allowMissing: true,
            pollInterval: .seconds(1), logger: logger)
        self.reloader = reloader
        self.logger = logger
    }

    package func run() async throws {
        try await withThrowingDiscardingTaskGroup { group in
            group.addTask { try await provider.run() }
            try await provider.watchSnapshot { updates in
                var first = true
                for try await _ in updates.cancelOnGracefulShutdown() {
                    if first {
                        first = false
                        continue
                    }
                    await reloader.reload(reason: "file changed")
                }
            }
            group.cancelAll()
        }
    }
}
