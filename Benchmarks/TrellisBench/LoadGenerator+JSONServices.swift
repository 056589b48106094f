import Foundation
import TrellisMQTT

/// Traffic of the JSON services and the device fleet: catalog searches and device log lines.
extension LoadGenerator {
    /// `count` closed-loop `catalog/search` requests; returns each round trip in microseconds.
    mutating func catalogSearches(count: Int) async throws -> [Double] {
        var samples: [Double] = []
        let clock = ContinuousClock()
        for id in 0..<count {
            let start = clock.now
            try client.publish(
                topic: "trellis/request/catalog/search",
                payload: Array((BenchCatalog.request + #","seed":\#(id),"transaction":\#(id)}"#).utf8), qos: .atMostOnce
            )
            let reply = try await next()
            let elapsed = clock.now - start
            guard let text = reply.text, text.contains(#""status":"ok""#), text.hasSuffix(#""transaction":\#(id)}"#)
            else {
                throw BenchError("unexpected reply to catalog search \(id): \(reply.text ?? "")")
            }
            samples.append(Double(elapsed.components.seconds) * 1e6 + Double(elapsed.components.attoseconds) / 1e12)
        }
        return samples
    }
}

extension LoadGenerator {
    /// `count` device log lines at QoS 1 over 100 devices with `window` in flight, each counted
    /// when Trellis has stored it and streams it on `trellis/logs/<device>`; returns lines per second.
    mutating func logIngest(count: Int, window: Int) async throws -> Double {
        func line(_ index: Int) -> (topic: String, payload: [UInt8]) {
            ("devices/d\(index % 100)/log", Array(#"{"type":"Device","message":"line \#(index)"}"#.utf8))
        }
        let clock = ContinuousClock()
        let start = clock.now
        var sent = 0, stored = 0
        while sent < min(window, count) {
            let next = line(sent)
            try client.publish(topic: next.topic, payload: next.payload, qos: .atLeastOnce)
            sent += 1
        }
        while stored < count {
            let message = try await next()
            guard message.payload.starts(with: Array(#"{"message":"line "#.utf8)) else { continue }
            stored += 1
            if sent < count {
                let next = line(sent)
                try client.publish(topic: next.topic, payload: next.payload, qos: .atLeastOnce)
                sent += 1
            }
        }
        let elapsed = clock.now - start
        return Double(count) / (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    }
}
