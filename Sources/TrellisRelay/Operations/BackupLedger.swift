import Foundation
import Synchronization
import TrellisCore

/// The relay's ``BackupAdmission`` behind a lock: which backup is being written and when the last
/// one was asked for. Shared by every engine the service builds (a reload keeps it), and by the
/// schedule, so a request and a scheduled backup are never written at once.
public final class BackupLedger: Sendable {
    private let admission = Mutex(BackupAdmission())

    public init() {}

    /// Asks to start a backup for `trigger` at `now`, with requests at most one per
    /// `requestInterval` seconds (the setting as it is now). On `.start` the caller takes the
    /// backup and then calls ``finish()``.
    public func begin(_ trigger: BackupAdmission.Trigger, at now: Date, requestInterval: TimeInterval)
        -> BackupAdmissionDecision
    {
        admission.withLock { admission in
            admission.minimumRequestInterval = max(0, requestInterval)
            return admission.begin(trigger, at: now)
        }
    }

    /// The backup begun last has ended, written or failed.
    public func finish() {
        admission.withLock { $0.finish() }
    }

    /// The backup being written, nil when none is.
    public var running: BackupAdmission.Running? {
        admission.withLock { $0.running }
    }
}
