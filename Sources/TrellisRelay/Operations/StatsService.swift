import Foundation
import Logging
import ServiceLifecycle
import Synchronization
import TrellisCore
import TrellisMQTTTypes
import TrellisStore

/// Publishes the retained `trellis/stats` every `interval`: the relay's counters, the sizes of
/// its state and its resident memory, so `mosquitto_sub -t trellis/stats` shows them at once.
public struct StatsService: Service {
    let relay: RelayService
    let logger: Logger
    let started = Date()
    /// The state sizes last read, published again while the store does not answer.
    private let lastCounts = LastCounts()

    /// Publishes the statistics of `relay`, at the interval of its current settings.
    public init(relay: RelayService, logger: Logger) {
        self.relay = relay
        self.logger = logger
    }

    public func run() async throws {
        let client = relay.client
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            let interval = Duration.milliseconds(Int(relay.engine.settings.statsInterval * 1000))
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
            guard !Task.isShuttingDownGracefully, !Task.isCancelled, client.isConnected else { continue }
            let engine = relay.engine
            do {
                try client.publish(
                    topic: engine.settings.statsTopic, payload: try await payload(),
                    qos: .atLeastOnce, retain: true)
            } catch {
                logger.warning("could not publish statistics: \(error)")
            }
        }
    }

    /// The statistics document.
    public func payload(now: Date = Date()) async throws -> [UInt8] {
        let engine = relay.engine
        // Published on time whatever the store does: while the store does not answer within a
        // second, the sizes last read stand (its `store` object says what is wrong).
        let answered = await engine.store.counts(within: .seconds(1))
        if let answered { lastCounts.value.withLock { $0 = answered } }
        guard let counts = answered ?? lastCounts.value.withLock({ $0 }) else {
            throw StoreError(code: .operationFailed, message: "the state store did not answer within 1 s")
        }
        let writes = await engine.store.writeStatus()
        let document = Stats(
            time: ISO8601Time.format(now),
            uptimeSeconds: Int(now.timeIntervalSince(started)),
            residentBytes: ProcessMemory.residentBytes(),
            counters: engine.counters.snapshot(),
            state: .init(
                plants: counts.plants, sensors: counts.sensors, buttons: counts.buttons,
                clients: counts.clients, deadLetters: counts.deadLetters, species: counts.species,
                devices: counts.devices, models: counts.models, deviceLogEntries: counts.deviceLogEntries),
            store: .init(writes)
        )
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Array(try encoder.encode(document))
    }

    struct Stats: Encodable {
        struct State: Encodable {
            var plants, sensors, buttons, clients: Int
            var deadLetters: Int
            var species: Int
            var devices, models: Int
            var deviceLogEntries: Int
            enum CodingKeys: String, CodingKey {
                case plants, sensors, buttons, clients, species, devices, models
                case deadLetters = "dead_letters"
                case deviceLogEntries = "device_log_entries"
            }
        }

        /// Whether the state store commits: `writable`, `failed_commits`, `unwritten_changes`,
        /// `oldest_unwritten_change_s` (0 when none waits) and, while failing, `error`.
        struct Store: Encodable {
            var writable: Bool
            var error: String?
            var failedCommits: Int
            var unwrittenChanges: Int
            var oldestUnwrittenChangeSeconds: Double

            init(_ status: StoreWriteStatus) {
                writable = status.writable
                error = status.error
                failedCommits = status.failedCommits
                unwrittenChanges = status.unwrittenChanges
                oldestUnwrittenChangeSeconds = ((status.oldestUnwrittenChangeSeconds ?? 0) * 1000).rounded() / 1000
            }

            enum CodingKeys: String, CodingKey {
                case writable, error
                case failedCommits = "failed_commits"
                case unwrittenChanges = "unwritten_changes"
                case oldestUnwrittenChangeSeconds = "oldest_unwritten_change_s"
            }
        }

        var time: String
        var uptimeSeconds: Int
        var residentBytes: Int?
        var counters: RelayCounters.Snapshot
        var state: State
        var store: Store

        enum CodingKeys: String, CodingKey {
            case time, counters, state, store
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

/// The state sizes a ``StatsService`` read last.
private final class LastCounts: Sendable {
    let value = Mutex<StoreCounts?>(nil)
}
