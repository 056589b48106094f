import Synchronization

/// Collects writes made behind and hands them to a single writer in batches, under the one rule
/// every store follows for them.
///
/// **The write-behind rule.** A change queued here is committed, or it is kept: a batch whose
/// commit fails is never dropped. It is retried, in order and before any later batch, after
/// ``RetryPolicy`` waits (50 ms doubling to 2 s), for as long as it fails. Every change has a
/// position (1, 2, 3, … in queueing order); ``waitUntilCommitted(through:)`` returns once every
/// change up to a position is committed. The relay acknowledges a message only after the changes
/// its handling queued are committed, so while commits fail its messages stay unacknowledged, its
/// reading pauses (flow control), and a restart or a lost connection makes the broker send them
/// again. Nothing acknowledged is ever lost. A batch commits in one transaction or not at all, so a
/// batch that failed is not half written. Since the sink is called again with the same batch until it
/// commits (or the buffer gives up, and then never again), a store whose COMMIT's answer can be lost
/// with its connection finds out, at that next call, whether the batch took effect, and does not write
/// it twice (PostgreSQL's `UnresolvedCommit`; SQLite always knows its COMMIT's outcome).
///
/// The rule lives here, not in a store: a store only gives the ``Sink`` that commits one batch in
/// one transaction and throws when it cannot. Every kind of change written behind (readings, log
/// lines, dead letters, delivery marks) shares the one buffer of its store and so the one rule.
///
/// A batch starts when `batchSize` changes are pending, `maxDelay` after the first pending one, or
/// at once when someone waits for a pending change. Batches run one at a time, in order, each as
/// one call of `sink`. When the writer falls more than `maxBatchesInFlight` batches behind,
/// `append` waits, bounding memory. Failures and recoveries are reported to ``StoreWriteHealth``.
package actor WriteBehindBuffer<Item: Sendable> {
    /// Commits one batch in one transaction; called by one batch at a time.
    package typealias Sink = @Sendable ([Item]) async throws -> Void

    private let sink: Sink
    private let batchSize: Int
    private let maxDelay: Duration
    private let maxBatchesInFlight: Int
    private let retry: RetryPolicy
    /// Where commit outcomes are reported.
    package nonisolated let health: StoreWriteHealth

    private var pending: [Item] = []
    private var timer: Task<Void, Never>?
    private var timerGeneration = 0
    private var tail: Task<Void, Never>?
    private var batchesInFlight = 0
    /// The position of the last change handed to a batch.
    private var dispatched: UInt64 = 0
    /// Set by ``giveUp()``: batches stop retrying, waiters are told no.
    private var abandoned = false

    private struct Waiter {
        let id: Int
        let position: UInt64
        /// Told no as soon as a commit fails, instead of waiting for the retry to succeed.
        let untilFailure: Bool
        let continuation: CheckedContinuation<Bool, Never>
    }
    private var waiters: [Waiter] = []
    private var nextWaiterID = 0

    /// Creates a buffer committing through `sink`.
    package init(
        batchSize: Int = 256,
        maxDelay: Duration = .milliseconds(20),
        maxBatchesInFlight: Int = 4,
        retry: RetryPolicy = RetryPolicy(),
        health: StoreWriteHealth = StoreWriteHealth(),
        sink: @escaping Sink
    ) {
        self.batchSize = max(1, batchSize)
        self.maxDelay = maxDelay
        self.maxBatchesInFlight = max(1, maxBatchesInFlight)
        self.retry = retry
        self.health = health
        self.sink = sink
    }

    /// Changes queued and not yet handed to a batch.
    package var pendingCount: Int { pending.count }
    /// True once ``giveUp()`` was called.
    package var gaveUp: Bool { abandoned }
    /// Batches committed (or abandoned) so far, for tests and metrics.
    private(set) var batchesFinished = 0

    /// The position of the newest change queued; read without entering the actor.
    package nonisolated let queued = Atomic<UInt64>(0)
    /// Every change up to this position is committed; read without entering the actor.
    package nonisolated let committed = Atomic<UInt64>(0)

    /// Changes queued and not yet committed.
    package nonisolated var outstanding: Int {
        Int(queued.load(ordering: .acquiring) &- committed.load(ordering: .acquiring))
    }

    /// True when every queued change has been committed.
    package nonisolated var isIdle: Bool { outstanding == 0 }

    /// True when every change up to `position` is committed.
    package nonisolated func isCommitted(through position: UInt64) -> Bool {
        committed.load(ordering: .acquiring) >= position
    }

    /// When the oldest change still pending was queued.
    private var pendingSince: ContinuousClock.Instant?
    /// When the oldest change of each batch in flight was queued, oldest first.
    private var inFlightSince: [ContinuousClock.Instant] = []

    /// How long the oldest change not yet committed has waited; nil when everything is committed.
    package func oldestUnwrittenAge() -> Duration? {
        (inFlightSince.first ?? pendingSince).map { ContinuousClock.now - $0 }
    }

    /// Queues one change, starting a batch when enough are pending, and returns its position.
    @discardableResult
    package func append(_ item: Item) async -> UInt64 {
        if pending.isEmpty { pendingSince = .now }
        let position = queued.add(1, ordering: .releasing).newValue
        pending.append(item)
        if pending.count >= batchSize {
            startBatch()
            if batchesInFlight > maxBatchesInFlight { await tail?.value }
        } else if timer == nil {
            armTimer()
        }
        return position
    }

    /// Waits until every change up to `position` is committed, starting its batch now if it is
    /// still pending. Failed commits are retried meanwhile (see the rule above).
    ///
    /// - Parameter untilFailure: return false as soon as a commit fails (or has failed and not yet
    ///   succeeded again), for callers that must not wait out a failing store.
    /// - Returns: true once committed; false when the buffer gave up (``giveUp()``), the calling
    ///   task was cancelled, or `untilFailure` and a commit failed.
    package func waitUntilCommitted(through position: UInt64, untilFailure: Bool = false) async -> Bool {
        if isCommitted(through: position) { return true }
        if abandoned || (untilFailure && health.writeBehindFailure != nil) { return false }
        if position > dispatched { startBatch() }
        let id = nextWaiterID
        nextWaiterID += 1
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                if Task.isCancelled {
                    continuation.resume(returning: false)
                } else {
                    waiters.append(
                        Waiter(id: id, position: position, untilFailure: untilFailure, continuation: continuation))
                }
            }
        } onCancel: {
            Task { await self.release(waiter: id) }
        }
    }

    /// Waits until everything queued so far is committed (see ``waitUntilCommitted(through:untilFailure:)``).
    @discardableResult
    package func drain(untilFailure: Bool = false) async -> Bool {
        await waitUntilCommitted(through: queued.load(ordering: .acquiring), untilFailure: untilFailure)
    }

    /// Stops retrying: the batch being retried and every later one are left unwritten, and every
    /// waiter is told no. For closing a store whose commits keep failing; the messages behind those
    /// changes were never acknowledged, so the broker sends them again.
    package func giveUp() async {
        abandoned = true
        for waiter in waiters { waiter.continuation.resume(returning: false) }
        waiters.removeAll()
        startBatch()
        await tail?.value
    }

    private func release(waiter id: Int) {
        guard let index = waiters.firstIndex(where: { $0.id == id }) else { return }
        waiters.remove(at: index).continuation.resume(returning: false)
    }

    private func armTimer() {
        timerGeneration += 1
        let generation = timerGeneration
        let delay = maxDelay
        timer = Task { [weak self] in
            try? await Task.sleep(for: delay)
            guard !Task.isCancelled else { return }
            await self?.timerFired(generation: generation)
        }
    }

    private func timerFired(generation: Int) {
        guard generation == timerGeneration else { return }
        timer = nil
        startBatch()
    }

    private func startBatch() {
        timer?.cancel()
        timer = nil
        timerGeneration += 1
        guard !pending.isEmpty else { return }
        let batch = pending
        pending.removeAll(keepingCapacity: true)
        dispatched += UInt64(batch.count)
        let last = dispatched
        inFlightSince.append(pendingSince ?? .now)
        pendingSince = nil
        let previous = tail
        batchesInFlight += 1
        tail = Task {
            await previous?.value
            await self.commit(batch, through: last)
        }
    }

    /// Commits `batch`, retrying for as long as it fails, unless the buffer gives up.
    private func commit(_ batch: [Item], through last: UInt64) async {
        var failures = 0
        while !abandoned {
            do {
                try await sink(batch)
                committed.store(last, ordering: .releasing)
                health.succeeded(on: .writeBehind)
                batchFinished()
                resumeWaiters { $0.position <= last ? true : nil }
                return
            } catch {
                failures += 1
                health.failed(error, on: .writeBehind, unwritten: outstanding)
                resumeWaiters { $0.untilFailure ? false : nil }
                try? await Task.sleep(for: retry.delay(afterFailures: failures))
            }
        }
        batchFinished()
    }

    private func batchFinished() {
        if !inFlightSince.isEmpty { inFlightSince.removeFirst() }
        batchesInFlight -= 1
        batchesFinished += 1
    }

    /// Resumes the waiters for which `answer` has one.
    private func resumeWaiters(_ answer: (Waiter) -> Bool?) {
        guard !waiters.isEmpty else { return }
        var keep: [Waiter] = []
        for waiter in waiters {
            if let result = answer(waiter) {
                waiter.continuation.resume(returning: result)
            } else {
                keep.append(waiter)
            }
        }
        waiters = keep
    }
}
