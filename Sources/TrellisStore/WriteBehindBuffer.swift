import Synchronization
/// Collects fire-and-forget writes and hands them to a single writer in batches.
///
/// A batch starts when `batchSize` items are pending or `maxDelay` after the first pending item,
/// whichever comes first. Batches run one at a time, in order, each as one call of `sink` (one
/// transaction), so a burst of readings costs a few commits instead of one per reading. When the
/// writer falls more than `maxBatchesInFlight` batches behind, `append` waits, bounding memory.
actor WriteBehindBuffer<Item: Sendable> {
    /// Writes one batch; called by one batch at a time.
    typealias Sink = @Sendable ([Item]) async throws -> Void

    private let sink: Sink
    private let batchSize: Int
    private let maxDelay: Duration
    private let maxBatchesInFlight: Int

    private var pending: [Item] = []
    private var timer: Task<Void, Never>?
    private var timerGeneration = 0
    private var tail: Task<Void, Never>?
    private var batchesInFlight = 0
    private var failure: (any Error)?

    /// Creates a buffer writing through `sink`.
    init(
        batchSize: Int = 256,
        maxDelay: Duration = .milliseconds(20),
        maxBatchesInFlight: Int = 4,
        sink: @escaping Sink
    ) {
        self.batchSize = max(1, batchSize)
        self.maxDelay = maxDelay
        self.maxBatchesInFlight = max(1, maxBatchesInFlight)
        self.sink = sink
    }

    /// Items queued and not yet handed to a batch.
    var pendingCount: Int { pending.count }
    /// Batches finished so far (written or failed), for tests and metrics.
    private(set) var batchesFinished = 0

    /// Items queued or being written; read without entering the actor, so readers that only
    /// need everything written can skip the hop when nothing is outstanding.
    nonisolated let outstanding = Atomic<Int>(0)

    /// True when every queued item has been written (or has failed).
    nonisolated var isIdle: Bool { outstanding.load(ordering: .acquiring) == 0 }

    /// When the oldest item still pending was queued.
    private var pendingSince: ContinuousClock.Instant?
    /// When the oldest item of each batch in flight was queued, oldest first.
    private var inFlightSince: [ContinuousClock.Instant] = []

    /// How long the oldest item not yet written has waited; nil when everything is written.
    func oldestUnwrittenAge() -> Duration? {
        (inFlightSince.first ?? pendingSince).map { ContinuousClock.now - $0 }
    }

    /// Queues one item, starting a batch when enough are pending.
    func append(_ item: Item) async {
        if pending.isEmpty { pendingSince = .now }
        outstanding.add(1, ordering: .releasing)
        pending.append(item)
        if pending.count >= batchSize {
            startBatch()
            if batchesInFlight > maxBatchesInFlight { await tail?.value }
        } else if timer == nil {
            armTimer()
        }
    }

    /// Writes everything queued so far and waits for it.
    /// - Throws: the first batch failure since the previous `flush()`.
    func flush() async throws {
        await drain()
        if let failure {
            self.failure = nil
            throw failure
        }
    }

    /// Writes everything queued so far and waits for it, leaving failures for `flush()`.
    func drain() async {
        startBatch()
        await tail?.value
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
        inFlightSince.append(pendingSince ?? .now)
        pendingSince = nil
        let previous = tail
        let sink = self.sink
        batchesInFlight += 1
        tail = Task {
            await previous?.value
            do {
                try await sink(batch)
            } catch {
                self.recordFailure(error)
            }
            self.batchFinished(count: batch.count)
        }
    }

    private func recordFailure(_ error: any Error) {
        if failure == nil { failure = error }
    }

    private func batchFinished(count: Int) {
        outstanding.subtract(count, ordering: .releasing)
        if !inFlightSince.isEmpty { inFlightSince.removeFirst() }
        batchesInFlight -= 1
        batchesFinished += 1
    }
}
