import Foundation
import TrellisCore
import TrellisMQTT

/// Publishes captured records to a broker, with their original spacing (scaled by a speed
/// factor) or back to back, each with its QoS, retain flag and properties.
public enum LiveReplay {
    public enum Pacing: Sendable, Hashable {
        /// Keep the gaps between records, divided by `speed` (2 is twice as fast).
        case original(speed: Double)
        /// Publish each as soon as the previous one has been accepted.
        case noDelay
    }

    /// Publishes `records` in order through `client` and waits for the broker to acknowledge
    /// each (QoS 1 and 2) or for it to be written (QoS 0). Returns how many were published.
    @discardableResult
    public static func publish(
        _ records: [CaptureRecord], through client: MQTTClient, pacing: Pacing,
        clock: ContinuousClock = ContinuousClock()
    ) async throws -> Int {
        guard let first = records.first else { return 0 }
        let start = clock.now
        var sent = 0
        for record in records {
            if case let .original(speed) = pacing, speed > 0 {
                let offset = Double(record.microseconds - first.microseconds) / 1_000_000 / speed
                let due = start + .microseconds(Int64((max(0, offset) * 1_000_000).rounded()))
                if due > clock.now { try await Task.sleep(until: due, clock: clock) }
            }
            try Task.checkCancellation()
            let message = record.message
            try await client.publishAndWait(
                topic: message.topic, payload: message.payload, qos: message.qos,
                retain: message.retain, properties: message.properties)
            sent += 1
        }
        return sent
    }
}
