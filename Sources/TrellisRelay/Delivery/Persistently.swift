import Logging
import TrellisStore

/// Runs a step that exactness depends on (reading or forgetting delivery marks) until it
/// succeeds, instead of skipping it: skipping could drop a new message as a redelivery or count a
/// redelivery twice. The caller takes no message meanwhile.
enum Persistently {
    /// Runs `step`, retrying after each failure with the store's backoff (50 ms doubling to 2 s).
    /// Logs an error naming the step and the cause the first time each kind of failure happens,
    /// and once more when the step finally succeeds.
    ///
    /// - Returns: true once the step succeeded; false when the calling task was cancelled first.
    static func run(
        _ step: String, logger: Logger, retry: RetryPolicy = RetryPolicy(),
        _ body: () async throws -> Void
    ) async -> Bool {
        var failures = 0
        var kindsLogged: Set<String> = []
        while !Task.isCancelled {
            do {
                try await body()
                if failures > 0 {
                    logger.notice(
                        "succeeded after failing; taking messages again",
                        metadata: ["step": "\(step)", "failed_attempts": "\(failures)"])
                }
                return true
            } catch {
                failures += 1
                if kindsLogged.insert(StoreWriteHealth.kind(of: error)).inserted {
                    logger.error(
                        "could not \(step): \(StoreWriteHealth.cause(of: error)); retrying, taking no messages meanwhile",
                        metadata: ["step": "\(step)", "error": "\(error)"])
                }
                try? await Task.sleep(for: retry.delay(afterFailures: failures))
            }
        }
        return false
    }
}
