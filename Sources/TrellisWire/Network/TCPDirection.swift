/// One direction of a TCP connection put back in order: sequence numbers compared modulo 2^32
/// (so they may wrap), retransmitted and overlapping bytes dropped, segments that come early
/// held until the bytes before them arrive.
///
/// A direction first seen without its SYN (the capture started mid-connection) starts at the
/// first segment it sees and says so (``startedMidStream``), so the MQTT reader can look for the
/// first whole packet.
struct TCPDirection {
    /// What accepting a segment gave.
    enum Outcome {
        /// Bytes now in order (perhaps none), each chunk starting where a segment started.
        case data([ArraySlice<UInt8>])
        /// Bytes are missing: the direction cannot go on.
        case gap(atMicroseconds: Int64)
    }

    /// An early segment waiting for the bytes before it.
    struct Held {
        var bytes: ArraySlice<UInt8>
        var microseconds: Int64
    }

    /// Early bytes held beyond this are taken as a gap that will not be filled.
    static let maximumHeld = 4 << 20

    /// The sequence number of the next byte expected; nil before the first segment.
    private(set) var next: UInt32?
    private(set) var startedMidStream = false
    private var held: [UInt32: Held] = [:]
    private var heldBytes = 0
    /// The SYN's sequence number, to tell a retransmitted SYN from a new connection on the same ports.
    private(set) var initialSequence: UInt32?
    private(set) var finished = false

    /// How far `a` is after `b` in sequence space (negative when before).
    @inline(__always)
    static func distance(_ a: UInt32, after b: UInt32) -> Int64 { Int64(Int32(bitPattern: a &- b)) }

    mutating func accept(_ segment: TCPSegment, at microseconds: Int64) -> Outcome {
        if segment.syn {
            if next == nil || initialSequence == nil {
                initialSequence = segment.sequence
                next = segment.sequence &+ 1
            }
            return .data([])
        }
        if segment.fin { finished = true }
        guard !segment.payload.isEmpty else { return .data([]) }
        guard let expected = next else {
            startedMidStream = true
            next = segment.sequence &+ UInt32(segment.payload.count)
            return .data([segment.payload])
        }
        let offset = Self.distance(segment.sequence, after: expected)
        if offset > 0 {
            if held[segment.sequence].map({ $0.bytes.count < segment.payload.count }) ?? true {
                heldBytes += segment.payload.count - (held[segment.sequence]?.bytes.count ?? 0)
                // A copy: a slice would keep the reader's whole buffer alive while the segment waits.
                held[segment.sequence] = Held(bytes: ArraySlice(Array(segment.payload)), microseconds: microseconds)
            }
            if heldBytes > Self.maximumHeld { return .gap(atMicroseconds: earliestHeld ?? microseconds) }
            return .data([])
        }
        var chunks: [ArraySlice<UInt8>] = []
        if let fresh = take(segment.payload, at: offset) { chunks.append(fresh) }
        // Held segments the new bytes reached.
        while !held.isEmpty {
            guard let current = next,
                let key = held.keys.first(where: { Self.distance($0, after: current) <= 0 })
            else { break }
            let waiting = held.removeValue(forKey: key)!
            heldBytes -= waiting.bytes.count
            if let fresh = take(waiting.bytes, at: Self.distance(key, after: current)) { chunks.append(fresh) }
        }
        return .data(chunks)
    }

    /// The part of `bytes` (starting `offset` ≤ 0 bytes from `next`) not seen before, moving `next`.
    private mutating func take(_ bytes: ArraySlice<UInt8>, at offset: Int64) -> ArraySlice<UInt8>? {
        let skip = Int(-offset)
        guard skip < bytes.count else { return nil } // a retransmission of bytes already read
        let fresh = bytes.dropFirst(skip)
        next = next! &+ UInt32(fresh.count)
        return fresh
    }

    /// True when bytes arrived early and the ones before them never did.
    var hasGap: Bool { !held.isEmpty }

    /// The time of the first segment held after a gap.
    var earliestHeld: Int64? { held.values.map(\.microseconds).min() }
}
