import Foundation
import TrellisCore

/// A store whose changes commit through one ``BufferedCommits``.
///
/// Everything that follows from the write-behind buffer alone is written here once for every
/// backend: the commit positions and waiting of ``StoreLifecycle``, the write status and probe,
/// and the changes that are only ever written behind (a sensor reading, a device log line, a dead
/// letter, a message kept for a bridge, the id of one carried in). A backend gives its `commits` and the reads and direct writes of its own SQL;
/// that the SQLite and the PostgreSQL store queue the same changes the same way then holds by
/// construction, not by two copies kept alike.
package protocol BufferedCommitsStore: Sendable {
    /// The store's write-behind buffer, the health of its commits and its patience.
    var commits: BufferedCommits { get }
}

extension BufferedCommitsStore {
    /// Whether commits succeed, over both commit paths.
    public var health: StoreWriteHealth { commits.health }

    /// Commits every change queued behind and waits for it; while commits fail, waits at most
    /// the store's patience.
    public func flush() async throws {
        try commits.checkOpen("flush()")
        try await commits.settle()
    }

    public func stopRetrying() async {
        commits.stopWaiting()
        await commits.buffer.giveUp()
    }

    public var stoppedWaiting: Bool { commits.stoppedWaiting }
    public var queuedPosition: UInt64 { commits.buffer.queued.load(ordering: .acquiring) }
    public func isCommitted(through position: UInt64) -> Bool { commits.buffer.isCommitted(through: position) }
    public var uncommittedPosition: UInt64? {
        let buffer = commits.buffer
        let position = buffer.queued.load(ordering: .acquiring)
        return buffer.isCommitted(through: position) ? nil : position
    }
    public func waitUntilCommitted(through position: UInt64) async -> Bool {
        await commits.buffer.waitUntilCommitted(through: position)
    }
    public func oldestUnwrittenChangeAge() async -> Double? { await commits.oldestUnwrittenChangeAge() }
    public func writeStatus() async -> StoreWriteStatus { await commits.writeStatus() }
    /// Succeeds when a real write commits now (see ``BufferedCommits/checkWritable(timeout:)``).
    public func checkWritable(timeout: Duration) async throws { try await commits.checkWritable(timeout: timeout) }
    public func checkWritable() async throws { try await commits.checkWritable(timeout: .seconds(5)) }

    /// Queues a fire-and-forget write (see ``BufferedCommits/enqueue(_:_:)``).
    package func enqueue(_ operation: @autoclosure () -> String, _ item: BufferedWrite) async throws {
        try await commits.enqueue(operation(), item)
    }

    // MARK: The changes only ever written behind

    public func recordReading(sensor: String, moisture: Int, temperature: Double, at: Date) async throws {
        try await enqueue(
            "recordReading(sensor: \(sensor))",
            .reading(sensor: sensor, moisture: moisture, temperature: temperature, at: at.storeMilliseconds))
    }

    public func appendDeviceLog(device: String, entry: DeviceLogEntry, limit: Int) async throws {
        try await enqueue(
            "appendDeviceLog(device: \(device))",
            .deviceLog(
                device: device, at: entry.timestamp.storeMilliseconds, type: entry.type, message: entry.message,
                limit: max(0, limit)))
    }

    /// Kept in a batch with the delivery's mark, so the local broker has the message acknowledged
    /// once it is in the queue, and thousands a second are kept, not one per commit.
    public func enqueueForward(
        bridge: String, rule: String, topic: String, payload: [UInt8], qos: Int, retain: Bool, at time: Date
    ) async throws {
        try await enqueue(
            "enqueueForward(bridge: \(bridge), topic: \(topic))",
            .forward(
                bridge: bridge, rule: rule, topic: topic, payload: payload, qos: qos, retain: retain,
                at: time.storeMilliseconds))
    }

    public func observeForwardsKept(
        bridge: String, _ told: @escaping @Sendable () -> Void
    ) -> ForwardsKeptObservation {
        commits.kept.observe(bridge: bridge, told)
    }

    public func recordCarriedIn(bridge: String, id: BridgeMessageID, forgettingPast keep: Int?) async throws {
        try await enqueue(
            "recordCarriedIn(bridge: \(bridge))",
            .carriedIn(
                bridge: bridge, origin: id.origin, sequence: id.sequence, forgettingPast: keep.map { max(0, $0) }))
    }

    public func recordDeadLetter(reason: String, topic: String, payload: [UInt8], at: Date, client: String, quota: Int)
        async throws
    {
        try await enqueue(
            "recordDeadLetter(reason: \(reason))",
            .deadLetter(
                reason: reason, topic: topic, payload: payload, at: at.storeMilliseconds, client: client,
                quota: max(1, quota)))
    }
}
