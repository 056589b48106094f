/// The most recent deliveries Trellis handled, and the rule that tells a broker's redelivery from
/// a new message.
///
/// An MQTT broker resends, on the next connection of a resumed session, each QoS 1 message whose
/// acknowledgement it did not receive, with the same packet identifier. Trellis can have handled
/// such a message already (its state change committed, the acknowledgement lost with the
/// connection), so a message is a redelivery when its identifier and fingerprint match one of the
/// last `capacity` handled. The broker numbers a session's messages in sequence, so inside a
/// window far smaller than 65,535 an identifier is never reused for another message.
///
/// When the broker did not resume the session, it numbers from the start again and sends nothing
/// twice: the window is emptied, and the caller told to forget the stored marks too.
public struct DeliveryWindow: Sendable {
    /// What to do with a message.
    public enum Verdict: Sendable, Equatable {
        /// Not seen before: handle it and store `mark`; `forgetStored` asks to drop stored marks
        /// first, because this is the first message of a new session.
        case fresh(DeliveryMark, forgetStored: Bool)
        /// Already handled: drop it.
        case redelivery
    }

    /// How many handled deliveries are remembered.
    public let capacity: Int
    /// Packet identifier → (fingerprint, sequence number of its entry in `ring`).
    private var marks: [Int: (fingerprint: UInt64, sequence: Int)] = [:]
    /// Identifiers in the order handled; entry `sequence % capacity` holds sequence `sequence`.
    private var ring: [Int]
    private var sequence = 0
    /// The connection the last message came on; nil before any.
    private var connection: Int?

    /// A window of `capacity` deliveries; at least the broker's in-flight limit for Trellis.
    public init(capacity: Int = 4096) {
        precondition(capacity > 0, "a delivery window holds at least one mark")
        self.capacity = capacity
        self.ring = Array(repeating: 0, count: capacity)
    }

    /// The marks remembered, oldest first.
    public var remembered: [DeliveryMark] {
        let first = max(0, sequence - capacity)
        return (first..<sequence).compactMap { position in
            let id = ring[position % capacity]
            guard let entry = marks[id], entry.sequence == position else { return nil }
            return DeliveryMark(packetID: id, fingerprint: entry.fingerprint)
        }
    }

    /// Remembers `stored` (oldest first), as handled before this process started.
    public mutating func restore(_ stored: [DeliveryMark]) {
        for mark in stored { remember(mark) }
    }

    /// Judges a message received on `connection`, with the session flag of that connection, and
    /// remembers it when it is new.
    public mutating func admit(_ mark: DeliveryMark, connection: Int, sessionResumed: Bool) -> Verdict {
        var forget = false
        if connection != self.connection {
            self.connection = connection
            if !sessionResumed {
                marks.removeAll(keepingCapacity: true)
                forget = true
            }
        }
        if let known = marks[mark.packetID], known.fingerprint == mark.fingerprint {
            return .redelivery
        }
        remember(mark)
        return .fresh(mark, forgetStored: forget)
    }

    private mutating func remember(_ mark: DeliveryMark) {
        if sequence >= capacity {
            let evicted = ring[sequence % capacity]
            if marks[evicted]?.sequence == sequence - capacity { marks[evicted] = nil }
        }
        ring[sequence % capacity] = mark.packetID
        marks[mark.packetID] = (mark.fingerprint, sequence)
        sequence += 1
    }
}
