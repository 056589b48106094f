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
        /// UTF-8 bytes and the payload. Only the first ``used`` bytes are the message's: the rest is room
        /// kept for the next one, so that a slot is made anew only for a message larger than any before.
        var bytes: [UInt8] = []
        var used = 0
        /// What the message counts against ``TrafficWatch/byteLimit``.
        var size = 0
        var omitted = 0
        var presses: Int?
        var at = Date.distantPast
        var seq = 0

        /// A slot's bytes larger than this are let go when its message is, so that each slot does not
        /// hold the largest message it ever kept: the ring holds at most ``byteLimit`` of messages and
        /// `capacity` × this of room.
        static let spareLimit = 4 << 10

        static let headerSize = 9

        /// Copies `message` and what ``TrafficWatch/publishesKept`` keeps of `publishes` in: the bytes
        /// are counted first and each record copied into its place, with no append's checks per part.
        mutating func keep(_ message: MQTTMessage, publishes: [MQTTMessage]) {
            let last = publishes.count - 1
            var total = Self.headerSize + message.topic.utf8.count + message.payload.count
            // Only each kept publish's parts are read: a `for … in` would copy each whole message.
            for index in publishes.indices where index < TrafficWatch.publishesKept - 1 || index == last {
                total += Self.headerSize + publishes[index].topic.utf8.count + publishes[index].payload.count
            }
            if bytes.count < total { bytes = [UInt8](repeating: 0, count: total) }
            used = total
            bytes.withUnsafeMutableBytes { raw in
                var offset = Self.write(message.topic, message.payload, message.qos, message.retain, into: raw, at: 0)
                for index in publishes.indices where index < TrafficWatch.publishesKept - 1 || index == last {
                    offset = Self.write(
                        publishes[index].topic, publishes[index].payload, publishes[index].qos,
                        publishes[index].retain, into: raw, at: offset)
                }
            }
        }

        /// Lets the message go; its bytes stay for the next one unless they are many.
        mutating func release() {
            used = 0
            if bytes.count > Self.spareLimit { bytes = [] }
        }

        /// Writes one record at `offset`; returns where the next one goes.
        private static func write(
            _ topic: String, _ payload: [UInt8], _ qos: QoS, _ retain: Bool,
            into raw: UnsafeMutableRawBufferPointer, at offset: Int
        ) -> Int {
            let utf8 = topic.utf8
            raw.storeBytes(of: UInt32(utf8.count).littleEndian, toByteOffset: offset, as: UInt32.self)
            raw.storeBytes(of: UInt32(payload.count).littleEndian, toByteOffset: offset + 4, as: UInt32.self)
            raw[offset + 8] = UInt8(qos.rawValue) | (retain ? 0x80 : 0)
            var next = offset + headerSize
            let copied = utf8.withContiguousStorageIfAvailable { source in
                UnsafeMutableRawBufferPointer(rebasing: raw[next..<next + source.count]).copyMemory(
                    from: UnsafeRawBufferPointer(source))
            }
            if copied == nil {
                for (index, byte) in utf8.enumerated() { raw[next + index] = byte }
            }
            next += utf8.count
            payload.withUnsafeBytes { source in
                UnsafeMutableRawBufferPointer(rebasing: raw[next..<next + source.count]).copyMemory(from: source)
            }
            return next + payload.count
        }

        /// The messages kept, read back: the received one first.
        var messages: [MQTTMessage] {
            var messages: [MQTTMessage] = []
            var offset = 0
            bytes.withUnsafeBytes { raw in
                while offset + Self.headerSize <= used {
                    let topicCount = Int(
                        UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
                    let payloadCount = Int(
                        UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)))
                    let flags = raw[offset + 8]
                    let topicStart = offset + Self.headerSize
                    let payloadStart = topicStart + topicCount
                    offset = payloadStart + payloadCount
                    messages.append(
                        MQTTMessage(
                            topic: String(decoding: raw[topicStart..<payloadStart], as: UTF8.self),
                            payload: Array(raw[payloadStart..<offset]),
                            qos: QoS(rawValue: Int(flags & 0x7F)) ?? .atMostOnce, retain: flags & 0x80 != 0))
                }
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
    }
}
