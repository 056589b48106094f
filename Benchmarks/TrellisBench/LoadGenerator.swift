import Foundation
import Synchronization
import TrellisBroker
import TrellisMQTT

/// The figures of one contender, by name.
typealias Figures = [String: Double]

/// Drives request/reply traffic through the broker with the Swift `MQTTClient` and measures it; the same
/// code measures the C baseline and Trellis, so their figures compare.
struct LoadGenerator {
    let client: MQTTClient
    var replies: MQTTMessageStream.AsyncIterator

    /// Connects a load client and subscribes to `replyFilters`.
    static func connect(port: Int, id: String, replyFilters: [String]) async throws -> LoadGenerator {
        let client = try MQTTClient(
            configuration: MQTTConfiguration(
                host: "127.0.0.1", port: port, clientID: id,
                inflightMaximum: 65_535))
        client.start()
        try await client.waitUntilConnected()
        for filter in replyFilters { try await client.subscribe(filter, qos: .atLeastOnce) }
        return LoadGenerator(client: client, replies: client.messages.makeAsyncIterator())
    }

    static func request(_ id: Int) -> [UInt8] {
        Array("ID:\(id);sender:bench;receiver:Host-RPI3B+;payload:all;operation:REQ_plantSensorData".utf8)
    }

    /// A well-formed request with an operation the plant tracker does not have: answered with
    /// `ERR_invalidOpTag` and kept as a dead letter.
    static func rejectedRequest(_ id: Int) -> [UInt8] {
        Array("ID:\(id);sender:bench;receiver:Host-RPI3B+;payload:all;operation:REQ_noSuchOperation".utf8)
    }

    /// The next message; the watchdog ends the run when none comes.
    mutating func next() async throws -> MQTTMessage {
        guard let message = await replies.next() else { throw BenchError("the reply stream ended") }
        Watchdog.tick()
        return message
    }

    /// One request in flight at a time on `topic`; returns each round trip in microseconds. Every
    /// reply must carry the request's ID and end with `suffix`.
    mutating func closedLoop(
        count: Int, qos: QoS, topic: String, suffix: [UInt8],
        request: (Int) -> [UInt8] = LoadGenerator.request
    ) async throws -> [Double] {
        var samples: [Double] = []
        samples.reserveCapacity(count)
        let clock = ContinuousClock()
        for id in 0..<count {
            let start = clock.now
            try client.publish(topic: topic, payload: request(id), qos: qos)
            let reply = try await next()
            let elapsed = clock.now - start
            guard reply.payload.starts(with: Array("ID:\(id);".utf8)), reply.payload.ends(with: suffix) else {
                throw BenchError("unexpected reply to request \(id): \(reply.text ?? "")")
            }
            samples.append(Double(elapsed.components.seconds) * 1e6 + Double(elapsed.components.attoseconds) / 1e12)
        }
        return samples
    }

    /// `window` requests in flight on `topic`; returns round trips per second. Every reply must end with `suffix`.
    mutating func pipelined(count: Int, window: Int, qos: QoS, topic: String, suffix: [UInt8]) async throws -> Double {
        let clock = ContinuousClock()
        let start = clock.now
        var sent = 0, bad = 0
        while sent < min(window, count) {
            try client.publish(topic: topic, payload: Self.request(sent), qos: qos)
            sent += 1
        }
        var received = 0
        while received < count {
            if try await !next().payload.ends(with: suffix) { bad += 1 }
            received += 1
            if sent < count {
                try client.publish(topic: topic, payload: Self.request(sent), qos: qos)
                sent += 1
            }
        }
        let rate = Double(count) / seconds(clock.now - start)
        guard bad == 0 else {
            throw BenchError("\(bad) of \(count) replies did not end with \(String(decoding: suffix, as: UTF8.self))")
        }
        return rate
    }

    /// Publishes `presses` presses of button b0 on `topic` (at most `window` unanswered) and waits
    /// for all `presses × fanout` deliveries; returns presses per second.
    mutating func fanOut(presses: Int, fanout: Int, window: Int, topic: String) async throws -> Double {
        let clock = ContinuousClock()
        let start = clock.now
        var sent = 0, delivered = 0
        while sent < min(window, presses) {
            try client.publish(topic: topic, payload: [], qos: .atLeastOnce)
            sent += 1
        }
        while delivered < presses * fanout {
            guard try await next().payload == Array("b0".utf8) else { throw BenchError("a delivery that is not b0") }
            delivered += 1
            if delivered % fanout == 0 && sent < presses {
                try client.publish(topic: topic, payload: [], qos: .atLeastOnce)
                sent += 1
            }
        }
        return Double(presses) / seconds(clock.now - start)
    }

    func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}

/// The C load generator (`Benchmarks/baseline/loadgen.c`): the same traffic from one libmosquitto thread.
struct CLoadGenerator {
    let binary: String
    let work: String

    /// Runs it to completion and returns its `key=value` figures.
    func run(_ arguments: [String]) async throws -> [String: Double] {
        let output = work + "/loadgen-\(UUID().uuidString).log"
        let process = try ChildProcess(path: binary, arguments: arguments, outputPath: output)
        Watchdog.adopt(process.pid)
        while process.isRunning {
            Watchdog.tick()
            try await Task.sleep(for: .milliseconds(10))
        }
        process.waitUntilExit()
        Watchdog.release(process.pid)
        let text = Contender.read(output)
        guard process.terminationStatus == 0 else { throw BenchError("loadgen \(arguments) failed: \(text)") }
        var figures: [String: Double] = [:]
        for token in text.split(whereSeparator: \.isWhitespace) {
            let pair = token.split(separator: "=", maxSplits: 1)
            if pair.count == 2, let value = Double(pair[1]) { figures[String(pair[0])] = value }
        }
        if let bad = figures["bad"], bad > 0 {
            throw BenchError("loadgen \(arguments): \(Int(bad)) unexpected replies")
        }
        return figures
    }
}

/// Ends the whole run, children included, when no message has arrived for a while: every loop stops by itself.
enum Watchdog {
    private static let progress = Atomic<Int>(0)
    private static let children = Mutex<[pid_t]>([])

    static func tick() { progress.add(1, ordering: .relaxed) }
    static func adopt(_ pid: pid_t) { children.withLock { $0.append(pid) } }
    static func release(_ pid: pid_t) { children.withLock { $0.removeAll { $0 == pid } } }
    static func killChildren() { for pid in children.withLock({ $0 }) { kill(pid, SIGKILL) } }

    /// SIGINT and SIGTERM stop every adopted child too: they run in their own process groups, so
    /// a Ctrl-C or a `timeout` would otherwise leave a broker and a relay running.
    nonisolated(unsafe) private static var signalSources: [any DispatchSourceSignal] = []

    /// Watches in the background; after `stall` without progress, kills every adopted child and exits with 3.
    static func start(stall: Duration = .seconds(60)) {
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                killChildren()
                exit(128 + number)
            }
            source.resume()
            signalSources.append(source)
        }
        Thread.detachNewThread {
            var last = progress.load(ordering: .relaxed)
            var since = ContinuousClock.now
            while true {
                Thread.sleep(forTimeInterval: 1)
                let now = progress.load(ordering: .relaxed)
                if now != last { (last, since) = (now, ContinuousClock.now); continue }
                if ContinuousClock.now - since > stall {
                    FileHandle.standardError.write(Data("trellis-bench: no progress for \(stall); stopping\n".utf8))
                    killChildren()
                    exit(3)
                }
            }
        }
    }
}

struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

extension Array where Element == UInt8 {
    func ends(with suffix: [UInt8]) -> Bool {
        count >= suffix.count && self[(count - suffix.count)...].elementsEqual(suffix)
    }
}

/// Percentiles of latency samples.
extension Array where Element == Double {
    /// The middle value (the mean of the two middle ones for an even count); 0 when empty.
    var median: Double {
        guard !isEmpty else { return 0 }
        let sorted = self.sorted()
        return sorted.count.isMultiple(of: 2)
            ? (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2 : sorted[sorted.count / 2]
    }

    func percentile(_ p: Double) -> Double {
        guard !isEmpty else { return 0 }
        let sorted = self.sorted()
        return sorted[Swift.min(sorted.count - 1, Int(Double(sorted.count) * p))]
    }
}
