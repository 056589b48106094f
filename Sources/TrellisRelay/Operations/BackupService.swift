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
///
/// One backup is written at a time, and requests are rate-limited (``BackupAdmission``): a request
/// while a backup is written is answered `busy`, one within ``RelaySettings/backupRequestInterval``
/// of the last `rate_limited`. Requested backups are named and rotated apart from the scheduled
/// ones (``BackupKind``, ``RelaySettings/backupRequestKeep``), so no number of requests removes a
/// scheduled backup.
public struct BackupService: Service {
    let relay: RelayService
    let logger: Logger

    public init(relay: RelayService, logger: Logger) {
        self.relay = relay
        self.logger = logger
    }

    /// Takes the scheduled backups until Trellis stops; the settings are read again after each
    /// wait, so a reload changes the interval, the directory and how many are kept. A scheduled
    /// backup due while a requested one is written waits for it, then is taken.
    public func run() async throws {
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            let interval = relay.engine.settings.backupInterval
            let wait = interval > 0 ? interval : 60
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: .milliseconds(Int(wait * 1000))) }
            var engine = relay.engine
            guard !Task.isShuttingDownGracefully, !Task.isCancelled, engine.settings.backupInterval > 0,
                !engine.settings.backupDirectory.isEmpty
            else { continue }
            while case .busy = engine.backups.begin(
                .schedule, at: Date(), requestInterval: engine.settings.backupRequestInterval)
            {
                try? await cancelWhenGracefulShutdown { try await Task.sleep(for: .seconds(1)) }
                if Task.isShuttingDownGracefully || Task.isCancelled { return }
                engine = relay.engine
            }
            defer { engine.backups.finish() }
            _ = await Self.take(store: engine.store, settings: engine.settings, kind: .scheduled, logger: logger)
        }
    }

    /// Takes one backup of `kind`, logs and counts it; the refusal to answer when the store cannot
    /// be backed up this way or it failed.
    static func take(
        store: any TrellisStore, settings: RelaySettings, kind: BackupKind,
        logger: Logger
    ) async -> Result<BackupFile, JSONServiceError> {
        let trigger =
            kind == .scheduled ? BackupAdmission.Trigger.schedule.rawValue : BackupAdmission.Trigger.request.rawValue
        let target: any StoreBackingUp
        switch backingUp(store, settings: settings) {
        case let .success(backingUp): target = backingUp
        case let .failure(refusal): return .failure(refusal)
        }
        let keep = kind == .scheduled ? settings.backupKeep : settings.backupRequestKeep
        do {
            let file = try await target.backup(into: settings.backupDirectory, keep: keep, kind: kind, at: Date())
            Counter(label: "trellis_backups_total", dimensions: [("trigger", trigger), ("outcome", "written")])
                .increment()
            logger.info(
                "backed up the state",
                metadata: ["file": "\(file.path)", "bytes": "\(file.bytes)", "trigger": "\(trigger)"])
            return .success(file)
        } catch {
            Counter(label: "trellis_backups_total", dimensions: [("trigger", trigger), ("outcome", "failed")])
                .increment()
            logger.error(
                "could not back up the state",
                metadata: ["directory": "\(settings.backupDirectory)", "error": "\(error)"])
            return .failure(JSONServiceError(.internalError, "the backup failed: \(error)"))
        }
    }

    /// `store` as one that backs itself up into ``RelaySettings/backupDirectory``, or why it cannot.
    static func backingUp(_ store: any TrellisStore, settings: RelaySettings) -> Result<
        any StoreBackingUp, JSONServiceError
    > {
        guard let backingUp = store as? any StoreBackingUp else {
            return .failure(
                JSONServiceError(.invalidRequest, "this state is kept in PostgreSQL: back it up with pg_dump"))
        }
        guard !settings.backupDirectory.isEmpty else {
            return .failure(JSONServiceError(.invalidRequest, "no backup directory is set (state.backup.dir)"))
        }
        return .success(backingUp)
    }

    /// `store/backup` in the JSON envelope, for operators alone: one backup at a time, at most one
    /// per ``RelaySettings/backupRequestInterval``; a refused request is answered at once and
    /// counted (`trellis_backups_total{outcome="busy"|"rate_limited"}`).
    static func routes(settings: RelaySettings) -> [Route] {
        let backup = JSONAction("backup", access: .operators(may: "take backups")) { request, call in
            if let error = request.requireOnly([]) { return JSONResult(.error(error)) }
            var logger = call.context.logger
            logger[metadataKey: "requested_by"] = "\(call.client ?? "operator")"
            let context = call.context
            // What no backup could answer is answered first, and does not count as asked for.
            if case let .failure(refusal) = backingUp(context.store, settings: context.settings) {
                return JSONResult(.error(refusal))
            }
            let decision = context.backups.begin(
                .request, at: context.now, requestInterval: context.settings.backupRequestInterval)
            if let refusal = decision.refusal {
                let code: JSONErrorCode = if case .busy = decision { .busy } else { .rateLimited }
                Counter(
                    label: "trellis_backups_total", dimensions: [("trigger", "request"), ("outcome", code.rawValue)]
                ).increment()
                logger.notice("refused a backup request", metadata: ["reason": "\(code.rawValue)"])
                return .error(code, refusal)
            }
            defer { context.backups.finish() }
            switch await take(store: context.store, settings: context.settings, kind: .requested, logger: logger) {
            case let .success(file): return .ok(file)
            case let .failure(error): return JSONResult(.error(error))
            }
        }
        return JSONService("store", settings: settings, actions: [backup]).routes
    }
}
