import Foundation
import TrellisMQTTTypes

extension TrafficWatch {
    /// One message as `trace` reads it back: the message received (without its v5 properties or
    /// delivery), the publishes kept, and how many were left out.
    struct Entry {
        var message: MQTTMessage
        var publishes: [MQTTMessage]
        /// How many of its publishes were left out, and how many were presses fanned out (when any were).
        var omitted: Int
        var presses: Int?
        var at: Date
        var seq: Int
    }

    /// One place in the ring. A kept message is copied into the slot's bytes, which the next message
    /// in the slot reuses: keeping a message takes no reference to its storage, so neither keeping it
    /// nor letting it go allocates, frees or counts a reference. The relay keeps every message it
    /// handles, so this is on every message's path.
    struct Slot {
        /// The message and then its kept publishes, each as one record: the topic's and the payload's
        /// lengths (4 bytes each, little-endian), QoS with retain as its high bit (1 byte), the topic's
        /// UTF-8 bytes and the payload.
        var bytes: [UInt8] = []
        /// What the message counts against ``TrafficWatch/byteLimit``.
        var size = 0
        var omitted = 0
        var presses: Int?
        var at = Date.distantPast
        var seq = 0

        /// A slot's bytes larger than this are let go when its message is, so that each slot does not
        /// hold the largest message it ever kept: the ring holds at most ``byteLimit`` of messages and
        /// `capacity` × this of spare room.
        static let spareLimit = 4 << 10

        static let headerSize = 9

        /// Copies `message` and what ``TrafficWatch/publishesKept`` keeps of `publishes` in.
        mutating func keep(_ message: MQTTMessage, publishes: [MQTTMessage]) {
            bytes.removeAll(keepingCapacity: true)
            append(message)
            let count = publishes.count
            // Only each kept publish is read: a `for … in` would copy each whole message.
            for index in publishes.indices where index < TrafficWatch.publishesKept - 1 || index == count - 1 {
                append(publishes[index])
            }
        }

        /// Lets the message go; its bytes stay for the next one unless they are many.
        mutating func release() {
            if bytes.capacity > Self.spareLimit { bytes = [] }
        }

        private mutating func append(_ message: MQTTMessage) {
            let topic = message.topic.utf8
            withUnsafeBytes(of: (UInt32(topic.count).littleEndian, UInt32(message.payload.count).littleEndian)) {
                bytes.append(contentsOf: $0)
            }
            bytes.append(UInt8(message.qos.rawValue) | (message.retain ? 0x80 : 0))
            if topic.withContiguousStorageIfAvailable({ bytes.append(contentsOf: $0) }) == nil {
                bytes.append(contentsOf: topic)
            }
            bytes.append(contentsOf: message.payload)
        }

        /// The messages kept, read back: the received one first.
        var messages: [MQTTMessage] {
            var messages: [MQTTMessage] = []
            var offset = 0
            while offset + Self.headerSize <= bytes.count {
                let topicCount = Self.length(bytes, at: offset)
                let payloadCount = Self.length(bytes, at: offset + 4)
                let flags = bytes[offset + 8]
                let topicStart = offset + Self.headerSize
                let payloadStart = topicStart + topicCount
                offset = payloadStart + payloadCount
                messages.append(
                    MQTTMessage(
                        topic: String(decoding: bytes[topicStart..<payloadStart], as: UTF8.self),
                        payload: Array(bytes[payloadStart..<offset]),
                        qos: QoS(rawValue: Int(flags & 0x7F)) ?? .atMostOnce, retain: flags & 0x80 != 0))
            }
            return messages
        }

        var entry: Entry? {
            let messages = messages
            guard let first = messages.first else { return nil }
            return Entry(
                message: first, publishes: Array(messages.dropFirst()), omitted: omitted, presses: presses, at: at,
                seq: seq)
        }

        private static func length(_ bytes: [UInt8], at offset: Int) -> Int {
            (0..<4).reduce(0) { $0 | Int(bytes[offset + $1]) << (8 * $1) }
        }
    }
}
