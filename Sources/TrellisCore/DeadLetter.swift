#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A message the relay could not handle, kept for inspection instead of being silently dropped.
///
/// Copies are bounded: a payload larger than ``maximumPayloadSize`` (64 KiB) is truncated when
/// the record is created; ``size`` keeps the original length and ``json()`` then adds
/// `"truncated": true` and `"size": N`. A UTF-8 payload is cut at a character boundary.
public struct DeadLetter: Sendable, Equatable {
    /// The largest payload copy kept, in bytes.
    public static let maximumPayloadSize = 64 * 1024

    /// A short snake_case reason, e.g. `invalid_utf8`, `spam_muted`, `moisture_out_of_range`.
    public var reason: String
    /// The MQTT topic the message arrived on.
    public var topic: String
    /// The payload, or its first bytes when it was larger than ``maximumPayloadSize``.
    public var payload: [UInt8]
    /// When the relay received the message.
    public var receivedAt: Date
    /// The original payload size in bytes.
    public var size: Int

    /// Creates a record, truncating `payload` to at most ``maximumPayloadSize`` bytes.
    public init(reason: String, topic: String, payload: [UInt8], receivedAt: Date) {
        self.reason = reason
        self.topic = topic
        self.receivedAt = receivedAt
        self.size = payload.count
        self.payload = Self.bounded(payload)
    }

    /// True when ``payload`` holds only the beginning of the original.
    public var truncated: Bool { size > payload.count }

    /// The record as compact JSON with sorted keys: `payload` (text, when valid UTF-8) or
    /// `payload_base64` (otherwise), `reason`, `received_at` (ISO 8601 UTC with milliseconds),
    /// `topic`, and `size`/`truncated` when truncated.
    public func json() -> [UInt8] {
        let text = String(validating: payload, as: UTF8.self)
        let body = DeadLetterBody(
            payload: text,
            payloadBase64: text == nil ? Data(payload).base64EncodedString() : nil,
            reason: reason,
            receivedAt: PlantTimestamp.format(receivedAt),
            size: truncated ? size : nil,
            topic: topic,
            truncated: truncated ? true : nil
        )
        return Array(PlantPayloads.render(body).utf8)
    }

    private static func bounded(_ payload: [UInt8]) -> [UInt8] {
        guard payload.count > maximumPayloadSize else { return payload }
        var end = maximumPayloadSize
        if String(validating: payload, as: UTF8.self) != nil {
            while end > 0, payload[end] & 0xC0 == 0x80 { end -= 1 }
        }
        return Array(payload[..<end])
    }

    private struct DeadLetterBody: Encodable {
        var payload: String?
        var payloadBase64: String?
        var reason: String
        var receivedAt: String
        var size: Int?
        var topic: String
        var truncated: Bool?

        enum CodingKeys: String, CodingKey {
            case payload, reason, size, topic, truncated
            case payloadBase64 = "payload_base64"
            case receivedAt = "received_at"
        }
    }
}
