import Foundation
import TrellisMQTT

/// Drives request/reply traffic through the broker and measures it; the same code measures the
/// C baseline and Trellis, so their figures compare.
struct LoadGenerator {
    let client: MQTTClient
    var replies: AsyncStream<MQTTMessage>.Iterator

    /// Connects a load client and subscribes to `replyFilters`.
    static func connect(port: Int, id: String, replyFilters: [String]) async throws -> LoadGenerator {
        let client = try MQTTClient(configuration: MQTTConfiguration(host: "127.0.0.1", port: port, clientID: id,
                                                                     inflightMaximum: 65_535))
        client.start()
        try await client.waitUntilConnected()
        for filter in replyFilters { try await client.subscribe(filter, qos: .atLeastOnce) }
        return LoadGenerator(client: client, replies: client.messages.makeAsyncIterator())
    }

    static func request(_ id: Int) -> [UInt8] {
        Array("ID:\(id);sender:bench;receiver:Host-RPI3B+;payload:all;operation:REQ_plantSensorData".utf8)
    }

    /// One request in flight at a time; returns each round trip in microseconds.
    mutating func closedLoop(count: Int, qos: QoS) async throws -> [Double] {
        var samples: [Double] = []
        samples.reserveCapacity(count)
        let clock = ContinuousClock()
        for id in 0..<count {
            let start = clock.now
            try client.publish(topic: "rpi/torpi", payload: Self.request(id), qos: qos)
            guard await replies.next() != nil else { throw BenchError("the reply stream ended") }
            let elapsed = clock.now - start
            samples.append(Double(elapsed.components.seconds) * 1e6 + Double(elapsed.components.attoseconds) / 1e12)
        }
        return samples
    }

    /// `window` requests in flight; returns round trips per second.
    mutating func pipelined(count: Int, window: Int, qos: QoS) async throws -> Double {
        let clock = ContinuousClock()
        let start = clock.now
        var sent = 0
        while sent < min(window, count) {
            try client.publish(topic: "rpi/torpi", payload: Self.request(sent), qos: qos)
            sent += 1
        }
        var received = 0
        while received < count {
            guard await replies.next() != nil else { throw BenchError("the reply stream ended") }
            received += 1
            if sent < count {
                try client.publish(topic: "rpi/torpi", payload: Self.request(sent), qos: qos)
                sent += 1
            }
        }
        return Double(count) / seconds(clock.now - start)
    }

    /// Publishes `presses` presses of button b0 (at most `window` unanswered) and waits for all
    /// `presses × fanout` deliveries; returns presses per second.
    mutating func fanOut(presses: Int, fanout: Int, window: Int) async throws -> Double {
        let clock = ContinuousClock()
        let start = clock.now
        var sent = 0, delivered = 0
        while sent < min(window, presses) {
            try client.publish(topic: "p2o/buttons/b0/press", payload: [], qos: .atLeastOnce)
            sent += 1
        }
        while delivered < presses * fanout {
            guard await replies.next() != nil else { throw BenchError("the delivery stream ended") }
            delivered += 1
            if delivered % fanout == 0 && sent < presses {
                try client.publish(topic: "p2o/buttons/b0/press", payload: [], qos: .atLeastOnce)
                sent += 1
            }
        }
        return Double(presses) / seconds(clock.now - start)
    }

    func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}

struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Percentiles of latency samples.
extension Array where Element == Double {
    func percentile(_ p: Double) -> Double {
        guard !isEmpty else { return 0 }
        let sorted = self.sorted()
        return sorted[Swift.min(sorted.count - 1, Int(Double(sorted.count) * p))]
    }
}
