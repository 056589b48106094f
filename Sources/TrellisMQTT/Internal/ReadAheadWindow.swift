/// The messages handed to the consumer and not yet handled, and the two rules of flow control
/// that follow from them.
///
/// - Writing: libmosquitto queues the acknowledgement of a QoS 1 message as it reads it, but only
///   the network loop writes. While the consumer holds a message, nothing is written, so no
///   acknowledgement leaves before the message it answers has been handled (its state change
///   committed). A crash then loses nothing: the broker sends again what it saw no
///   acknowledgement for. Replies written in the meantime wait for the same moment.
/// - Reading: at most `limit` messages (and about `byteLimit` bytes of payload) are read ahead of
///   the consumer, so memory stays bounded under a flood; one message is always allowed. Nothing
///   more is read while writes wait, so however fast messages come the window drains and
///   acknowledgements, answers and keepalives leave.
/// - A new connection: the messages of a connection that closed no longer hold anything back
///   (``connectionClosed()``). libmosquitto drops their queued acknowledgements when it reconnects
///   and the broker sends them again on the new connection, so the new connection's CONNECT,
///   keepalives and reads must not wait for a consumer that is still handling them (one waiting
///   for its store, say): otherwise a relay holding a message across a lost connection could never
///   connect again. They still take room in the window (past the limit, one message of the new
///   connection is read, as always), so repeated reconnections during a long wait cannot pile up
///   more than that; they are reported handled, in order, and those reports let nothing more through.
///
/// Without a limit the window counts nothing and never holds reads or writes back.
struct ReadAheadWindow: Sendable {
    /// Most messages held; nil for no flow control.
    let limit: Int?
    /// Payload bytes past which no further message is read while one is held.
    let byteLimit: Int
    /// Payload sizes of the messages held, oldest first (the consumer handles them in order).
    private var sizes: [Int] = []
    private var head = 0
    /// How many of the oldest messages held came on a connection that closed since.
    private(set) var stale = 0
    /// Payload bytes held.
    private(set) var bytes = 0

    init(limit: Int?, byteLimit: Int = 8 << 20) {
        self.limit = limit.map { max(1, $0) }
        self.byteLimit = max(1, byteLimit)
    }

    /// Messages held, of every connection.
    var count: Int { sizes.count - head }

    /// Messages held that came on the current connection: only these hold reads and writes back.
    var live: Int { count - stale }

    /// The connection closed: the messages held now came on it, and their acknowledgements will
    /// never be written, so they hold nothing back any more.
    mutating func connectionClosed() {
        stale = count
    }

    /// A message of `size` payload bytes was handed to the consumer.
    mutating func delivered(size: Int) {
        guard limit != nil else { return }
        sizes.append(size)
        bytes += size
    }

    /// The consumer handled its oldest message. Returns true when that may let the loop read or
    /// write again, so a waiting loop must be woken.
    mutating func handled() -> Bool {
        guard limit != nil, count > 0 else { return false }
        let couldRead = hasRoom
        if stale > 0 { stale -= 1 }
        bytes -= sizes[head]
        head += 1
        if head == sizes.count {
            sizes.removeAll(keepingCapacity: true)
            head = 0
        }
        return live == 0 || (!couldRead && hasRoom)
    }

    /// The loop may read another message, given whether packets wait to be written.
    func mayRead(writesPending: Bool) -> Bool {
        mayWrite || (hasRoom && !writesPending)
    }

    /// Within one burst of reads, begun when ``mayRead(writesPending:)`` allowed it, after `read`
    /// messages: another message fits, whatever acknowledgements the burst itself queued, since
    /// those wait for the consumer anyway and the next burst waits for them. A burst ends after as
    /// many messages as the window holds, even when a consumer on another thread keeps making room,
    /// so the loop still writes and keeps the connection alive. Without a window there are no
    /// bursts: one read per pass of the loop, as libmosquitto's own loop does.
    func mayContinueBurst(read: Int) -> Bool {
        guard let limit else { return false }
        return read < limit && count < limit && bytes < byteLimit
    }

    /// The loop may write: the consumer holds no message of this connection whose acknowledgement is queued.
    var mayWrite: Bool { limit == nil || live == 0 }

    /// Another message fits in the window.
    private var hasRoom: Bool {
        guard let limit else { return true }
        return live == 0 || (count < limit && bytes < byteLimit)
    }
}
