/// The sending side of a bridge's store-and-forward queue, as a value in the manner of
/// ``ConnectionAttempts``: what happened goes in (the uplink came up or went down, the store has new
/// messages, a batch was read, the upstream broker acknowledged one), what to do comes out (read a
/// batch, publish a message, delete what was acknowledged). The driver that performs the actions is
/// the only place with I/O.
///
/// Messages are sent in the store's order, at most ``limit`` unacknowledged at a time; a message
/// leaves the store only once the upstream broker acknowledged it, so an uplink lost with messages in
/// flight sends them again, first and in order, when it comes back (at least once: the receiving side
/// drops a duplicate by its id).
///
/// The store's order is its ids', but an id is not always visible in order: PostgreSQL hands out
/// ids as messages are inserted, so one relay's message can commit after another's with a higher
/// id was read (relays of a share group queue at once). Reads go on from the newest id read, so that
/// a live stream's read at each commit (``kept()``) finds only what is new; each look at the store
/// (``stored()``) reads from the queue's head and skips what the window already holds, so a message
/// seen late goes then.
///
/// Acknowledged messages are deleted in batches (``deleteBatch``): one store transaction per
/// message held a drain to the store's commit rate. A batch goes when it is full, at each look at
/// the store (``stored()``) and when the turn ends (``stop()``);
/// its ids are held until the driver says the delete was done (``deleted(_:)``), so that a read from
/// the queue's head, even one the driver performs first, does not send them again; a delete that
/// failed goes again with the next batch (``deleteFailed(_:)``).
public struct ForwardWindow: Sendable {
    /// One stored message to forward, by its place in the store's queue.
    public struct Message: Sendable, Equatable {
        public var id: Int64
        /// The topic it is to have upstream, its payload, QoS (0 or 1) and retained flag there.
        public var topic: String, payload: [UInt8], qos: Int, retain: Bool

        public init(id: Int64, topic: String, payload: [UInt8], qos: Int, retain: Bool) {
            (self.id, self.topic, self.payload, self.qos, self.retain) = (id, topic, payload, qos, retain)
        }
    }

    public enum Action: Sendable, Equatable {
        /// Read up to `limit` stored messages after the one with id `after`, oldest first.
        case read(after: Int64, limit: Int)
        /// Publish upstream; `again` when it was sent before and not acknowledged (MQTT's DUP).
        case publish(Message, again: Bool)
        /// The upstream broker has these: delete them from the store.
        case delete([Int64])
    }

    /// At most this many messages unacknowledged at a time.
    public let limit: Int
    /// Acknowledged messages deleted in one store operation: half the window (at least one).
    public var deleteBatch: Int { max(1, limit / 2) }
    /// Acknowledged upstream, not yet deleted from the store, oldest first.
    public private(set) var acknowledgedIDs: [Int64] = []
    /// Acknowledged, and their delete given to the driver, not yet done.
    private var deleting: Set<Int64> = []
    public private(set) var connected = false
    /// Sent, not yet acknowledged, oldest first.
    public private(set) var inFlight: [Message] = []
    /// Read from the store, not yet sent, oldest first.
    private var waiting: [Message] = []
    /// The newest id read, after which the next read starts unless it is from the queue's head.
    private var newestRead: Int64 = 0
    /// The next read starts from the queue's head (a look at the store asked for it).
    private var fromHead = false
    /// A read is under way; another would read the same messages again.
    private var reading = false
    /// The store may hold messages not read yet: at start (a backlog), after a read that filled its
    /// limit, and after anything stored.
    private var more = true
    /// Something was stored while a read was under way, which that read may not have seen.
    private var storedDuringRead = false

    public init(limit: Int = 64) {
        self.limit = max(1, limit)
    }

    /// Every message the window holds, whose id the store must keep and whose drop is not to be
    /// counted: in flight, read and waiting to go, acknowledged and not yet deleted. A trim of the
    /// queue spares them: they will be sent (or were) whatever the bound says.
    public var heldIDs: [Int64] {
        inFlight.map(\.id) + waiting.map(\.id) + acknowledgedIDs + deleting.sorted()
    }

    /// The uplink is connected: what was in flight goes again, in order, then the window fills.
    public mutating func connect() -> [Action] {
        connected = true
        return inFlight.map { .publish($0, again: true) } + fill()
    }

    /// The uplink is lost: nothing is sent until it comes back; what was in flight stays in the store.
    public mutating func disconnect() {
        connected = false
    }

    /// A look at the store: what was acknowledged is deleted, and the queue is read from its head
    /// when the window has room (finding what a read after the newest id could not: a message that
    /// became visible after a newer one was read).
    public mutating func stored() -> [Action] {
        fromHead = true
        return flush() + kept()
    }

    /// The store says something was kept since the last look: read it when the window has room.
    /// Told at each commit of a live stream, this adds no delete of its own: the acknowledged go with
    /// their batch (``deleteBatch``) or at the next look (``stored()``).
    public mutating func kept() -> [Action] {
        more = true
        if reading { storedDuringRead = true }
        return fill()
    }

    /// A read brought `messages` (oldest first); `complete` when they were all the store had.
    public mutating func read(_ messages: [Message], complete: Bool) -> [Action] {
        reading = false
        let held = Set(inFlight.map(\.id) + waiting.map(\.id) + acknowledgedIDs).union(deleting)
        let fresh = messages.filter { !held.contains($0.id) }
        newestRead = max(newestRead, messages.last?.id ?? newestRead)
        waiting += fresh
        more = !complete || storedDuringRead
        storedDuringRead = false
        return fill()
    }

    /// A read failed (the store is away): tried again on the next event.
    public mutating func readFailed() {
        reading = false
        storedDuringRead = false
        more = true
    }

    /// The upstream broker acknowledged the message `id` (or, at QoS 0, it was written out).
    public mutating func acknowledged(_ id: Int64) -> [Action] {
        guard let index = inFlight.firstIndex(where: { $0.id == id }) else { return [] }
        inFlight.remove(at: index)
        acknowledgedIDs.append(id)
        return (acknowledgedIDs.count >= deleteBatch ? flush() : []) + fill()
    }

    /// How many acknowledgements the driver may gather before it hands them in: one while messages
    /// wait for room in the window, else as many as complete a batch to delete. Until then they
    /// change nothing the driver must do, so the driver need not be woken for each (at a live
    /// stream's pace, a wake per message was much of the forwarder's cost); it hands in what it
    /// gathered whenever it wakes for something else.
    public var acknowledgementsAwaited: Int {
        waiting.isEmpty ? max(1, deleteBatch - acknowledgedIDs.count) : 1
    }

    /// The driver performed the delete of `ids`.
    public mutating func deleted(_ ids: [Int64]) {
        deleting.subtract(ids)
    }

    /// The driver's delete of `ids` failed (the store is away): they go with the next batch to
    /// delete, and are held until then (not read and sent again, spared by a trim: the upstream
    /// broker has them, so they are neither lost nor dropped).
    public mutating func deleteFailed(_ ids: [Int64]) {
        let failed = ids.filter { deleting.remove($0) != nil }
        acknowledgedIDs = (failed + acknowledgedIDs).sorted()
    }

    /// The turn ends (the link is given up, the relay stops): what was acknowledged is deleted now,
    /// not sent again by the next turn.
    public mutating func stop() -> [Action] {
        flush()
    }

    /// The acknowledged messages not yet deleted, to delete now.
    private mutating func flush() -> [Action] {
        guard !acknowledgedIDs.isEmpty else { return [] }
        defer { acknowledgedIDs = [] }
        deleting.formUnion(acknowledgedIDs)
        return [.delete(acknowledgedIDs)]
    }

    /// Sends what waits while there is room, and asks for a read when little waits.
    private mutating func fill() -> [Action] {
        var actions: [Action] = []
        guard connected else { return actions }
        while inFlight.count < limit, !waiting.isEmpty {
            let next = waiting.removeFirst()
            inFlight.append(next)
            actions.append(.publish(next, again: false))
        }
        if !reading, more, waiting.count < limit {
            reading = true
            actions.append(.read(after: fromHead ? 0 : newestRead, limit: limit * 2))
            fromHead = false
        }
        return actions
    }
}
