import Foundation
import Synchronization
import TrellisCore

/// The durability half every store shares: its write-behind buffer, the health of its commits,
/// its patience, and whether it is closed.
///
/// A store only gives the sink that commits one batch of ``BufferedWrite`` in one transaction.
/// Flushing, settling before a close, the commit positions of ``StoreLifecycle``, the write status
/// and the health probe are built here on top of ``WriteBehindBuffer``, so the SQLite and the
/// PostgreSQL store follow the one write-behind rule by construction rather than by copy.
package final class BufferedCommits: Sendable {
    /// Readings, log lines, dead letters and their delivery marks waiting to be committed.
    package let buffer: WriteBehindBuffer<BufferedWrite>
    /// Whether commits succeed, over both commit paths (direct and written behind).
    package let health: StoreWriteHealth
    /// How long ``settle()`` waits while commits keep failing.
    package let patience: Duration
    private let closed = Mutex(false)
    private let waitingStopped = Mutex(false)
    private let retry = RetryPolicy()
    /// Tells whether the store's server can be reached: nil when it can, else why not. A store
    /// whose operations wait in silence while the server is away (a connection pool waiting to
    /// connect) gives one, so that an operation slower than ``slowAfter`` finds out and the outage
    /// is loud (``direct(reportsEveryOutcome:_:)``).
    package let reachability: (@Sendable () async -> (any Error)?)?
    /// How long an operation may take before ``reachability`` is asked, and then how often.
    package static let slowAfter: Duration = .seconds(2)
    /// Watches the direct operations in flight when there is a ``reachability`` to ask: an
    /// operation slower than ``slowAfter`` makes an unreachable server a reported failure.
    private let inFlight: InFlightWatch?
    /// Told of each committed batch that kept messages for a bridge, for its forwarder.
    package let kept: ForwardsKept

    package init(
        health: StoreWriteHealth, patience: Duration, reachability: (@Sendable () async -> (any Error)?)? = nil,
        sink commit: @escaping WriteBehindBuffer<BufferedWrite>.Sink
    ) {
        let kept = ForwardsKept()
        self.kept = kept
        let sink: WriteBehindBuffer<BufferedWrite>.Sink = { batch in
            try await commit(batch)
            kept.committed(batch)
        }
        self.health = health
        self.patience = patience
        self.reachability = reachability
        guard let reachability else {
            self.buffer = WriteBehindBuffer(health: health, sink: sink)
            self.inFlight = nil
            return
        }
        // A batch commit stalled while the server is away is an outage of the write-behind path,
        // reported as such (the commit goes on, and the buffer logs the recovery when it lands).
        let outstanding = Outstanding()
        let batches = InFlightWatch(slowAfter: Self.slowAfter, reachability: reachability) { failure, _ in
            health.failed(failure, on: .writeBehind, unwritten: outstanding.count(), waiting: false)
        }
        self.buffer = WriteBehindBuffer(health: health) { batch in
            let ticket = batches.begin(waiting: false)
            defer { _ = batches.end(ticket) }
            try await sink(batch)
        }
        let buffer = self.buffer
        outstanding.count = { buffer.outstanding }
        self.inFlight = InFlightWatch(slowAfter: Self.slowAfter, reachability: reachability) { failure, waiting in
            health.failed(failure, on: .direct, unwritten: buffer.outstanding, waiting: waiting)
        }
    }

    /// How many changes wait behind, for a log line of the write-behind's watch.
    private final class Outstanding: @unchecked Sendable {
        var count: @Sendable () -> Int = { 0 }
    }

    /// True once the store began closing.
    package var isClosed: Bool { closed.withLock { $0 } }

    /// Throws ``StoreError/closed(_:)`` once the store began closing.
    package func checkOpen(_ operation: @autoclosure () -> String) throws {
        if isClosed { throw StoreError.closed(operation()) }
    }

    /// Stops the waiting: operations waiting now, and those that fail from now on, throw their
    /// failure.
    package func stopWaiting() {
        waitingStopped.withLock { $0 = true }
    }

    /// Whether a failure that passes is waited out now: in a task that handles a delivered
    /// message (``OutageWaiting/enabled``), until ``stopWaiting()`` or the store closes.
    private var waitsOutOutages: Bool {
        OutageWaiting.enabled && !stoppedWaiting && !isClosed
    }

    /// True once ``stopWaiting()`` was called: a failure that passes thrown now means "not
    /// handled", not "refused".
    package var stoppedWaiting: Bool {
        waitingStopped.withLock { $0 }
    }

    /// Runs `attempt`, one direct operation (a transaction, or a read outside the write-behind),
    /// and reports its outcome to ``health``. In a task that waits out outages
    /// (``OutageWaiting/enabled``), a failure that passes (``StoreError/isTransient``: the server down
    /// or starting, a lost connection, a busy or full database) is tried again after
    /// ``RetryPolicy``'s wait for as long as it lasts, so the message being handled waits,
    /// unacknowledged, with reading paused, and is answered once the store is back; ``health``
    /// logs the outage once and the recovery once. Other failures, a closing store and
    /// ``stopWaiting()`` end it with the failure; a cancelled task's cancellation ends it unreported (a
    /// stop says nothing about the store, and an error logged at every shutdown would teach operators
    /// to ignore it).
    ///
    /// Writes report every outcome (`reportsEveryOutcome`); a read reports only a failure that
    /// passes and its own recovery, so a read that succeeds while writes fail (a full disk)
    /// does not hide that.
    ///
    /// An attempt that takes longer than ``slowAfter`` while the server cannot be reached
    /// (``reachability``) is an outage too, reported as such while the attempt goes on waiting.
    package func direct<T>(reportsEveryOutcome: Bool, _ attempt: () async throws -> T) async throws -> T {
        var failures = 0
        while true {
            do {
                let ticket = inFlight?.begin(waiting: waitsOutOutages)
                let result: T
                do {
                    result = try await attempt()
                } catch {
                    if let ticket { _ = inFlight?.end(ticket) }
                    throw error
                }
                let wasUnreachable = ticket.map { inFlight?.end($0) ?? false } ?? false
                if reportsEveryOutcome || failures > 0 || wasUnreachable { health.succeeded(on: .direct) }
                return result
            } catch {
                // Cut short by its caller (a stop): no news about the store, and not a failure to report.
                if Task.isCancelled, Self.isCancellation(error) { throw error }
                let transient = (error as? StoreError)?.isTransient ?? false
                let waits = transient && waitsOutOutages
                if reportsEveryOutcome || transient {
                    health.failed(error, on: .direct, unwritten: buffer.outstanding, waiting: waits)
                }
                guard waits else { throw error }
                failures += 1
                try? await Task.sleep(for: retry.delay(afterFailures: failures))
            }
        }
    }

    /// Whether `error` is a cancellation, as thrown or wrapped by the store.
    static func isCancellation(_ error: any Error) -> Bool {
        error is CancellationError || (error as? StoreError)?.underlying is CancellationError
    }

    /// Marks the store closed. True for the one call that closed it; later calls get false.
    package func beginClosing() -> Bool {
        closed.withLock { closed in
            defer { closed = true }
            return !closed
        }
    }

    /// Queues a change behind; one made while a delivery is in hand carries its mark, so both land
    /// in the same batch transaction.
    package func enqueue(_ operation: @autoclosure () -> String, _ item: BufferedWrite) async throws {
        try checkOpen(operation())
        if let mark = HandledDelivery.current {
            await buffer.append(.marked(item, mark))
        } else {
            await buffer.append(item)
        }
    }

    /// Waits until what is queued now is committed, giving up after `patience` of failing commits
    /// (the changes stay queued and keep being retried).
    package func settle() async throws {
        let target = buffer.queued.load(ordering: .acquiring)
        var deadline: ContinuousClock.Instant?
        while true {
            if await buffer.waitUntilCommitted(through: target, untilFailure: true) { return }
            if buffer.isCommitted(through: target) { return }
            if await buffer.gaveUp {
                throw health.writeBehindFailure
                    ?? StoreError(code: .operationFailed, message: "the store stopped retrying its commits")
            }
            let now = ContinuousClock.now
            let limit = deadline ?? now + patience
            deadline = limit
            if now >= limit, let failure = health.writeBehindFailure { throw failure }
            try? await Task.sleep(for: .milliseconds(50))
        }
    }

    /// Settles before the database is closed. When commits still fail once the patience is spent,
    /// gives the queued changes up and returns the failure to throw after closing: their messages
    /// were never acknowledged, so the broker sends them again.
    package func settleForClose() async -> StoreError? {
        defer { health.closing() }
        do {
            try await settle()
            return nil
        } catch {
            let unwritten = buffer.outstanding
            await buffer.giveUp()
            return StoreError(
                code: .operationFailed,
                message: "closing with \(unwritten) changes written behind that could not be committed "
                    + "(their messages were not acknowledged)",
                underlying: (error as? StoreError)?.underlying ?? error,
                systemReason: (error as? StoreError)?.systemReason)
        }
    }

    /// Seconds the oldest queued change has waited.
    package func oldestUnwrittenChangeAge() async -> Double? {
        guard let age = await buffer.oldestUnwrittenAge() else { return nil }
        return Double(age.components.seconds) + Double(age.components.attoseconds) / 1e18
    }

    /// The state of the commits now, without writing anything.
    package func writeStatus() async -> StoreWriteStatus {
        let failure = health.currentFailure
        return StoreWriteStatus(
            writable: failure == nil, error: failure.map(StoreWriteHealth.cause(of:)),
            failedCommits: health.failedCommits, unwrittenChanges: buffer.outstanding,
            oldestUnwrittenChangeSeconds: await oldestUnwrittenChangeAge())
    }

    /// Succeeds when a probe change, queued behind every change already queued, commits within
    /// `timeout` through the path real writes take; throws the write-behind's failure at once
    /// while its commits fail.
    package func checkWritable(timeout: Duration) async throws {
        if let failure = health.writeBehindFailure { throw failure }
        try checkOpen("checkWritable()")
        let position = await buffer.append(.probe(at: Date().storeMilliseconds))
        let buffer = self.buffer
        let committed = await withTaskGroup(of: Bool.self) { group in
            group.addTask { await buffer.waitUntilCommitted(through: position, untilFailure: true) }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
        if committed { return }
        if let failure = health.writeBehindFailure { throw failure }
        throw StoreError(code: .operationFailed, message: "checkWritable() did not commit within \(timeout)")
    }
}
