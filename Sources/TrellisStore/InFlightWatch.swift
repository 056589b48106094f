import Synchronization

/// Notices a server gone silent under the direct operations of a store, with one task for the
/// whole store rather than one per operation.
///
/// A connection pool waits in silence while its server is away, so an operation slower than
/// ``BufferedCommits/slowAfter`` makes the store ask its `reachability` and report an unreachable
/// server as a failure of the direct path: the outage is loud while the operation keeps waiting.
/// Watching each operation with a task of its own that sleeps for that long cost every operation a
/// timer scheduled and cancelled and a worker thread woken, which on PostgreSQL was a large part of a
/// round trip's CPU. Here an operation only notes when it began and when it ended (one uncontended
/// lock each); a single task looks at the operations in flight a few times a second while there are
/// any, and ends after a while without operations.
package final class InFlightWatch: Sendable {
    private struct Operation {
        var began: ContinuousClock.Instant
        /// Whether the operation waits out an outage (its failure is reported as waited out).
        var waiting: Bool
        /// An outage was reported while it was in flight: its success is a recovery.
        var sawOutage = false
    }

    private struct State {
        var next = 0
        var inFlight: [Int: Operation] = [:]
        /// The watching task runs.
        var watching = false
        /// When the watch last asked the server, so it asks at most once per ``BufferedCommits/slowAfter``.
        var lastAsked: ContinuousClock.Instant?
        /// When the last operation ended with none left in flight.
        var idleSince: ContinuousClock.Instant?
    }

    private let state = Mutex(State())
    private let reachability: @Sendable () async -> (any Error)?
    private let report: @Sendable (_ failure: any Error, _ waiting: Bool) -> Void
    private let slowAfter: Duration
    /// How often the watch looks at the operations in flight.
    private let tick: Duration
    /// How long the watch runs on without operations before it ends.
    private let idleLimit: Duration

    /// - Parameters:
    ///   - reachability: nil when the server can be reached, else why not.
    ///   - report: reports an unreachable server, with whether a slow operation waits the outage out.
    package init(
        slowAfter: Duration, reachability: @escaping @Sendable () async -> (any Error)?,
        report: @escaping @Sendable (_ failure: any Error, _ waiting: Bool) -> Void
    ) {
        self.slowAfter = slowAfter
        self.tick = slowAfter / 4
        self.idleLimit = slowAfter * 5
        self.reachability = reachability
        self.report = report
    }

    /// Notes an operation that begins now; returns its ticket for ``end(_:)``.
    package func begin(waiting: Bool) -> Int {
        let (ticket, start) = state.withLock { state -> (Int, Bool) in
            let ticket = state.next
            state.next += 1
            state.inFlight[ticket] = Operation(began: .now, waiting: waiting)
            state.idleSince = nil
            defer { state.watching = true }
            return (ticket, !state.watching)
        }
        if start { Task { await self.watch() } }
        return ticket
    }

    /// Notes that the operation of `ticket` ended; true when an outage was reported while it ran.
    package func end(_ ticket: Int) -> Bool {
        state.withLock { state in
            let operation = state.inFlight.removeValue(forKey: ticket)
            if state.inFlight.isEmpty { state.idleSince = .now }
            return operation?.sawOutage ?? false
        }
    }

    /// Looks at the operations in flight every ``tick``: when one has run longer than ``slowAfter``,
    /// asks the server (at most once per ``slowAfter``) and reports it unreachable. Ends once no
    /// operation has been in flight for ``idleLimit``; the next operation starts it again.
    private func watch() async {
        while true {
            try? await Task.sleep(for: tick)
            let now = ContinuousClock.now
            let slow = state.withLock { state -> [Int]? in
                if state.inFlight.isEmpty, let idle = state.idleSince, idle.duration(to: now) >= idleLimit {
                    state.watching = false
                    return nil
                }
                if let asked = state.lastAsked, asked.duration(to: now) < slowAfter { return [] }
                let slow = state.inFlight.filter { $0.value.began.duration(to: now) >= slowAfter }.map(\.key)
                if !slow.isEmpty { state.lastAsked = now }
                return slow
            }
            guard let slow else { return }
            guard !slow.isEmpty, let failure = await reachability() else { continue }
            let waiting = state.withLock { state -> Bool? in
                var waiting: Bool?
                for ticket in slow where state.inFlight[ticket] != nil {
                    state.inFlight[ticket]!.sawOutage = true
                    waiting = (waiting ?? false) || state.inFlight[ticket]!.waiting
                }
                return waiting
            }
            // Reported only while one of the slow operations still waits: one that ended meanwhile
            // found the server after all.
            if let waiting { report(failure, waiting) }
        }
    }
}
