import Foundation
import Logging
import Metrics
import NIOCore
import Synchronization
import TrellisSocketIO

/// The open connections of one HTTP server, held to ``ConnectionLimits/maximumConnections``.
///
/// A connection counts from its acceptance until it closes. One that would pass the cap takes the
/// place of the connection that has waited longest for a request it has begun: its first head, or
/// the rest of a body announced by a head. Those are the ones a slow client holds, and a probe, a
/// scrape or an app sends its request at once, so it gets in while thousands of stalled connections
/// come and go. Only when every open connection has its request whole (requests in progress, long
/// polls, WebSockets, kept-alive connections) is the new one closed at once. Each closing is counted
/// in `trellis_http_connections_closed_total{server,reason}` and logged at most once a minute per
/// reason.
final class ConnectionGate: Sendable {
    /// The server's name in metrics and logs: `socketio`, `health` or `metrics`.
    let server: String
    let limits: ConnectionLimits
    private let logger: Logger
    private let table = Mutex(Table())
    private let reports = Mutex(RefusalReport())
    private let clock = ContinuousClock()
    private let started: ContinuousClock.Instant
    private let open: Gauge

    /// Why the gate closed a connection, the `reason` label.
    enum Closing: String, Sendable {
        case headerTimeout = "header_timeout"
        case bodyTimeout = "body_timeout"
        case evicted
        case overCapacity = "over_capacity"
    }

    private struct Entry {
        let channel: any Channel
        /// When the connection began to wait for a request's bytes (its acceptance, or a head whose
        /// body has not all come), in the order of such events; nil while its request is whole. The
        /// smallest is evicted first.
        var waitingSince: UInt64?
    }

    private struct Table {
        var entries: [ObjectIdentifier: Entry] = [:]
        var next: UInt64 = 0
    }

    init(server: String, limits: ConnectionLimits, logger: Logger) {
        self.server = server
        self.limits = limits
        self.logger = logger
        self.started = clock.now
        self.open = Gauge(label: "trellis_http_connections", dimensions: [("server", server)])
    }

    /// Counts `channel` in, making room by evicting a waiting connection when the server is full.
    /// False when there is no room: the caller closes `channel` at once.
    func admit(_ channel: any Channel) -> Bool {
        let key = ObjectIdentifier(channel)
        let (admitted, evicted, count) = table.withLock { table -> (Bool, (any Channel)?, Int) in
            var evicted: (any Channel)?
            if table.entries.count >= limits.maximumConnections {
                let waiting = table.entries.compactMap { key, entry in entry.waitingSince.map { (key, $0) } }
                guard let oldest = waiting.min(by: { $0.1 < $1.1 }) else {
                    return (false, nil, table.entries.count)
                }
                evicted = table.entries.removeValue(forKey: oldest.0)?.channel
            }
            table.next += 1
            table.entries[key] = Entry(channel: channel, waitingSince: table.next)
            return (true, evicted, table.entries.count)
        }
        open.record(count)
        if let evicted {
            evicted.close(promise: nil)
            closed(.evicted)
        }
        guard admitted else {
            closed(.overCapacity)
            return false
        }
        channel.closeFuture.whenComplete { _ in self.remove(key) }
        return true
    }

    /// The connection waits for the rest of a request (`true`: a head came, its body is still
    /// coming; it may be evicted for a newcomer) or has its request whole (`false`: it may not).
    func waiting(_ channel: any Channel, _ waiting: Bool) {
        table.withLock { table in
            guard table.entries[ObjectIdentifier(channel)] != nil else { return }
            if waiting { table.next += 1 }
            table.entries[ObjectIdentifier(channel)]?.waitingSince = waiting ? table.next : nil
        }
    }

    /// Closes a connection whose first head (`headerTimeout`) or body (`bodyTimeout`) was late.
    func timedOut(_ channel: any Channel, _ reason: Closing) {
        channel.close(promise: nil)
        closed(reason)
    }

    /// Connections counted now.
    var count: Int { table.withLock { $0.entries.count } }

    private func remove(_ key: ObjectIdentifier) {
        let count = table.withLock { table -> Int in
            table.entries.removeValue(forKey: key)
            return table.entries.count
        }
        open.record(count)
    }

    private func limit(_ reason: Closing) -> String {
        switch reason {
        case .headerTimeout: "\(limits.headerTimeout) s"
        case .bodyTimeout: "\(limits.bodyTimeout) s"
        case .evicted, .overCapacity: "\(limits.maximumConnections) connections"
        }
    }

    private func closed(_ reason: Closing) {
        Counter(
            label: "trellis_http_connections_closed_total",
            dimensions: [("server", server), ("reason", reason.rawValue)]
        ).increment()
        let elapsed = clock.now - started
        let now = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
        guard let times = reports.withLock({ $0.record(reason.rawValue, now: now) }) else { return }
        logger.warning(
            "HTTP connections closed by the server's limits",
            metadata: [
                "server": "\(server)", "reason": "\(reason.rawValue)", "closed": "\(times)",
                "limit": "\(limit(reason))"
            ])
    }
}
