import Foundation
import Logging
import Synchronization
import TrellisCore

/// The log of a bridge side's operations that are tried again and again while they fail (a read of
/// the store at each poll, a local publish each second), as ``FailureSpells`` decides: a warning at
/// the first failure, at most one a minute with `failed_since_last_line`, an info line when the
/// operation works again with `failed_times`. One per forwarder and receiver.
final class BridgeFailureLog: Sendable {
    private let spells = Mutex(FailureSpells())
    private let logger: Logger
    private let bridge: String

    init(bridge: String, logger: Logger) {
        self.bridge = bridge
        self.logger = logger
    }

    /// `operation` (a verb phrase: "read the bridge's queue") failed with `error`.
    func failed(_ operation: String, _ error: any Error, metadata extra: Logger.Metadata = [:]) {
        guard let notice = spells.withLock({ $0.failed(operation, at: Date()) }) else { return }
        var metadata: Logger.Metadata = ["bridge": "\(bridge)", "error": "\(error)"]
        metadata.merge(extra) { $1 }
        if case let .again(unlogged) = notice { metadata["failed_since_last_line"] = "\(unlogged + 1)" }
        logger.warning("could not \(operation); trying again", metadata: metadata)
    }

    /// `operation` worked: said once when it had been failing.
    func worked(_ operation: String) {
        guard let failed = spells.withLock({ $0.succeeded(operation) }) else { return }
        logger.info("\(operation): works again", metadata: ["bridge": "\(bridge)", "failed_times": "\(failed)"])
    }
}
