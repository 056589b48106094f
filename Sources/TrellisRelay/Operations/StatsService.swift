import Foundation
import Logging
import ServiceLifecycle
import TrellisCore
import TrellisMQTT
import TrellisStore

/// Publishes the retained `trellis/stats` every `interval`: the relay's counters, the sizes of
/// its state and its resident memory, so `mosquitto_sub -t trellis/stats` shows them at once.
public struct StatsService: Service {
    let client: MQTTClient
    let engine: RelayEngine
    let interval: Duration
    let logger: Logger
    let started = Date()

    public init(client: MQTTClient, engine: RelayEngine, interval: Duration, logger: Logger) {
        self.client = client
        self.engine = engine
        self.interval = interval
        self.logger = logger
    }

    public func run() async throws {
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
            guard !Task.isShuttingDownGracefully, !Task.isCancelled, client.isConnected else { continue }
            do {
                try client.publish(topic: engine.settings.statsTopic, payload: try await payload(),
                                   qos: .atLeastOnce, retain: true)
            } catch {
                logger.warning("could not publish statistics: \(error)")
            }
        }
    }

    /// The statistics document.
    public func payload(now: Date = Date()) async throws -> [UInt8] {
        let counts = try await engine.store.counts()
        let document = Stats(
            time: ISO8601Time.format(now),
            uptimeSeconds: Int(now.timeIntervalSince(started)),
            residentBytes: ProcessMemory.residentBytes(),
            counters: engine.counters.snapshot(),
            state: .init(plants: counts.plants, sensors: counts.sensors, buttons: counts.buttons,
                         clients: counts.clients, deadLetters: counts.deadLetters)
        )
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Array(try encoder.encode(document))
    }

    struct Stats: Encodable {
        struct State: Encodable {
            var plants, sensors, buttons, clients: Int
            var deadLetters: Int
            enum CodingKeys: String, CodingKey {
                case plants, sensors, buttons, clients
                case deadLetters = "dead_letters"
            }
        }

        var time: String
        var uptimeSeconds: Int
        var residentBytes: Int?
        var counters: RelayCounters.Snapshot
        var state: State

        enum CodingKeys: String, CodingKey {
            case time, counters, state
            case uptimeSeconds = "uptime_s"
            case residentBytes = "resident_bytes"
        }
    }
}

/// The process's memory, from /proc.
public enum ProcessMemory {
    /// Resident set size in bytes (VmRSS), or nil where /proc is not available.
    public static func residentBytes() -> Int? {
        field("VmRSS").map { $0 * 1024 }
    }

    /// Peak resident set size in bytes (VmHWM).
    public static func peakResidentBytes() -> Int? {
        field("VmHWM").map { $0 * 1024 }
    }

    private static func field(_ name: String) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix(name + ":") }) else { return nil }
        return line.split(whereSeparator: { $0 == " " || $0 == "\t" }).dropFirst().first.flatMap { Int($0) }
    }
}
