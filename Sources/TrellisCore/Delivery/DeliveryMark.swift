/// What Trellis remembers of a QoS 1 or 2 message it handled, so that the broker's redelivery of
/// the same message can be recognised and dropped.
///
/// The packet identifier alone would do inside one resumed session; the fingerprint of topic and
/// payload guards against an identifier met again for a different message.
public struct DeliveryMark: Sendable, Hashable {
    /// The broker's packet identifier, 1...65535.
    public var packetID: Int
    /// ``fingerprint(topic:payload:)`` of the message.
    public var fingerprint: UInt64

    public init(packetID: Int, fingerprint: UInt64) {
        self.packetID = packetID
        self.fingerprint = fingerprint
    }

    /// The mark of a message with this identifier, topic and payload.
    public init(packetID: Int, topic: String, payload: [UInt8]) {
        self.init(packetID: packetID, fingerprint: Self.fingerprint(topic: topic, payload: payload))
    }

    /// A 64-bit FNV-1a hash of the topic, a zero byte and the payload.
    ///
    /// Stable across processes and machines (unlike `Hasher`), because marks are stored and
    /// compared after a restart.
    public static func fingerprint(topic: String, payload: [UInt8]) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        func mix(_ byte: UInt8) {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        for byte in topic.utf8 { mix(byte) }
        mix(0)
        for byte in payload { mix(byte) }
        return hash
    }
}
