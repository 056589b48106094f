import Foundation
import Logging
import Metrics
import ServiceLifecycle
import TrellisCore
import TrellisStore

/// Backups of an SQLite state while Trellis runs: every ``RelaySettings/backupInterval`` seconds
/// into ``RelaySettings/backupDirectory``, keeping the newest ``RelaySettings/backupKeep``, and
/// whenever an operator asks on `trellis/request/store/backup` (answered with the file's name,
/// size and time). A copy is one snapshot read through SQLite's online backup API on a thread of
/// its own, so the relay goes on answering while it is written.
public struct BackupService: Service {
    let relay: RelayService
    let logger: Logger

    public init(relay: RelayService, logger: Logger) {
        self.relay = relay
        self.logger = logger
    }

    /// Takes the scheduled backups until Trellis stops; the settings are read again after each
    /// wait, so a reload changes the interval, the directory and how many are kept.
    public func run() async throws {
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            let interval = relay.engine.settings.backupInterval
            let wait = interval > 0 ? interval : 60
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: .milliseconds(Int(wait * 1000))) }
            let settings = relay.engine.settings
            guard !Task.isShuttingDownGracefully, !Task.isCancelled, settings.backupInterval > 0,
                  !settings.backupDirectory.isEmpty else { continue }
            _ = await Self.take(store: relay.engine.store, settings: settings, trigger: "schedule", logger: logger)
        }
    }

    /// Takes one backup, logs and counts it; nil when the store cannot be backed up this way or it failed.
    static func take(store: any TrellisStore, settings: RelaySettings, trigger: String, logger: Logger) async -> Result<BackupFile, JSONServiceError> {
        guard let backingUp = store as? any StoreBackingUp else {
            return .failure(JSONServiceError(.invalidRequest, "this state is kept in PostgreSQL: back it up with pg_dump"))
        }
        guard !settings.backupDirectory.isEmpty else {
            return .failure(JSONServiceError(.invalidRequest, "no backup directory is set (state.backup.dir)"))
        }
        do {
            let file = try await backingUp.backup(into: settings.backupDirectory, keep: settings.backupKeep, at: Date())
            Counter(label: "trellis_backups_total", dimensions: [("trigger", trigger), ("outcome", "written")]).increment()
            logger.info("backed up the state", metadata: ["file": "\(file.path)", "bytes": "\(file.bytes)", "trigger": "\(trigger)"])
            return .success(file)
        } catch {
            Counter(label: "trellis_backups_total", dimensions: [("trigger", trigger), ("outcome", "failed")]).increment()
            logger.error("could not back up the state", metadata: ["directory": "\(settings.backupDirectory)", "error": "\(error)"])
            return .failure(JSONServiceError(.internalError, "the backup failed: \(error)"))
        }
    }

    /// `store/backup` in the JSON envelope, for operators alone.
    static func routes(settings: RelaySettings) -> [Route] {
        let backup = JSONAction("backup", operatorOnly: true, operatorsMay: "take backups") { request, call in
            if let error = request.requireOnly([]) { return JSONResult(.error(error)) }
            var logger = call.context.logger
            logger[metadataKey: "requested_by"] = "\(call.client ?? "operator")"
            switch await take(store: call.context.store, settings: call.context.settings, trigger: "request", logger: logger) {
            case let .success(file): return .ok(file)
            case let .failure(error): return JSONResult(.error(error))
            }
        }
        return JSONService("store", settings: settings, actions: [backup]).routes
    }
}
