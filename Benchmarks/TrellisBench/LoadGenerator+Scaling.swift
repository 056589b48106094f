import Foundation
import TrellisMQTT

/// Closed-loop traffic of the scaling figures: one device log line or one press at a time.
extension LoadGenerator {
    /// `count` log lines of `device` at QoS 1, one at a time, each timed until Trellis has stored it
    /// and streams it on `trellis/logs/<device>` (the generator must subscribe to that topic).
    mutating func logLines(count: Int, device: String) async throws -> [Double] {
        var samples: [Double] = []
        samples.reserveCapacity(count)
        let clock = ContinuousClock()
        for index in 0..<count {
            let marker = Array(#""message":"probe \#(index)""#.utf8)
            let start = clock.now
            try client.publish(
                topic: "devices/\(device)/log", payload: Array(#"{"type":"Device","message":"probe \#(index)"}"#.utf8),
                qos: .atLeastOnce)
            while try await next().payload.firstRange(of: marker) == nil {}
            samples.append(Self.microseconds(clock.now - start))
        }
        return samples
    }

    /// `count` presses of `button`, one at a time, each timed until all `listeners` registered clients
    /// have it on `<prefix>/clients/<client>/button-press` (the generator must subscribe to those topics).
    mutating func presses(count: Int, button: String, listeners: Int, prefix: String) async throws -> [Double] {
        var samples: [Double] = []
        let clock = ContinuousClock()
        let expected = Array(button.utf8)
        for _ in 0..<count {
            let start = clock.now
            try client.publish(topic: "\(prefix)/buttons/\(button)/press", payload: [], qos: .atLeastOnce)
            var delivered = 0
            while delivered < listeners {
                if try await next().payload == expected { delivered += 1 }
            }
            samples.append(Self.microseconds(clock.now - start))
        }
        return samples
    }

    static func microseconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) * 1e6 + Double(duration.components.attoseconds) / 1e12
    }
}
