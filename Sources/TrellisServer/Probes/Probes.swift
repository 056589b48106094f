import Foundation
import Synchronization
import TrellisRelay
import TrellisStore

/// The answers of `/livez` and `/readyz`, which a service manager, a container runtime or a load
/// balancer asks every few seconds. Neither may hang, and neither writes, but for the one probe
/// change of a liveness check after the handling stalled (below):
///
/// - liveness: the process answers, its MQTT network loop (which also runs the message
///   handling) went round within ``loopStallLimit``, and the message handling is not stuck: it has
///   not held a message without handling one for longer than ``handlingStallLimit`` while the store
///   takes writes (``HandlingWatch``) and no backup is being written. A relay waiting out a store or
///   broker outage is alive, and restarting it would not help; one still stuck once its store is
///   back needs a restart, which a failing `/livez` and the missing systemd watchdog pings get it.
///   The store is asked (and a probe change committed) only once the handling has stalled that long.
/// - readiness: the broker is connected, the store is writable and reachable, and the
///   write-behind backlog is under its bounds. The bridges' upstream links are shown beside, and
///   do not count. The store is asked at most every
///   ``storeCheckInterval``, one check shared by every probe (``StoreCheck``); a check that has not
///   answered within ``storeCheckTimeout`` counts as a store that does not answer.
package struct Probes: Sendable {
    let relay: RelayService
    let storeCheck = StoreCheck()
    let handlingWatch = HandlingWatch()
    /// The bridges' links to their upstream brokers now: shown by readiness, never failing it (a
    /// bridge whose uplink is down keeps its messages, and the local work goes on).
    let links: @Sendable () -> [ProbeLink]

    /// The probes of `relay`, each server sharing one store check, with its bridges' `links`.
    package init(relay: RelayService, links: @escaping @Sendable () -> [ProbeLink] = { [] }) {
        self.relay = relay
        self.links = links
    }

    static let loopStallLimit = 10.0
    /// Seconds the handling may hold a message without handling one while the store takes writes.
    static let handlingStallLimit = 60.0
    static let storeCheckInterval: Duration = .seconds(5)
    static let storeCheckTimeout: Duration = .seconds(1)
    /// Changes written behind and not yet committed beyond which Trellis is not ready.
    static let backlogLimit = 10_000
    /// Seconds the oldest unwritten change may wait before Trellis is not ready.
    static let backlogAgeLimit = 30.0

    /// One check's outcome: what it looked at, and why it failed.
    struct Check: Sendable {
        var ok: Bool
        var detail: [String: any Sendable] = [:]
        var error: String?

        var json: [String: Any] {
            var object: [String: Any] = detail
            object["ok"] = ok
            if let error { object["error"] = error }
            return object
        }
    }

    /// A probe's answer: 200 with `ok` everywhere, else 503 naming what is wrong.
    struct Answer: Sendable {
        var status: String
        var checks: [String: Check]
        /// Each bridge's links (`{"cloud": {"out": {"connected": true}}}`, and `"standby": true` on a
        /// relay of a share group while another relay holds the link), beside the checks.
        var bridges: [ProbeLink] = []
        var healthy: Bool { checks.values.allSatisfy(\.ok) }

        /// `{"status": …, "checks": {name: {ok, error?, …}}}` with sorted keys.
        var body: Data {
            var object: [String: Any] = ["status": status, "checks": checks.mapValues(\.json)]
            if !bridges.isEmpty {
                object["bridges"] = Dictionary(grouping: bridges, by: \.name).mapValues { links in
                    Dictionary(uniqueKeysWithValues: links.map { ($0.direction, $0.json) })
                }
            }
            return (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
        }

        /// One line for `trellis health`: the status, and each failing check with its error.
        var line: String {
            let failing = checks.filter { !$0.value.ok }.sorted { $0.key < $1.key }
            guard !failing.isEmpty else { return status }
            return status + ": " + failing.map { "\($0.key): \($0.value.error ?? "failing")" }.joined(separator: "; ")
        }
    }

    func liveness() async -> Answer {
        var loop = Check(ok: true)
        if let idle = relay.client.secondsSinceNetworkLoopRan {
            loop.detail["seconds_since_run"] = (idle * 1000).rounded() / 1000
            if idle > Self.loopStallLimit {
                loop.ok = false
                loop.error = "the MQTT network loop has not run for \(Int(idle)) s"
            }
        }
        let progress = relay.client.consumerProgress
        let stalled = handlingWatch.secondsStalled(held: progress.held, handled: progress.handled)
        var handling = Check(
            ok: true, detail: ["held": progress.held, "seconds_without_progress": (stalled * 10).rounded() / 10])
        if stalled > Self.handlingStallLimit, relay.engine.backups.running == nil, await storeTakesWrites() {
            handling.ok = false
            handling.error =
                "the message handling has made no progress for \(Int(stalled)) s while the state store takes writes"
        }
        let answer = Answer(status: "alive", checks: ["loop": loop, "handling": handling])
        return answer.healthy ? answer : Answer(status: "stalled", checks: answer.checks)
    }

    /// Whether the store answers and commits a change now: a probe change through the write-behind,
    /// the path every change takes (asked only of a handling stalled past ``handlingStallLimit``, so
    /// a store that is full, locked or away, which the handling is rightly waiting out, keeps the
    /// relay alive).
    private func storeTakesWrites() async -> Bool {
        let store = relay.engine.store
        let reached = await storeCheck.result(
            of: store, every: Self.storeCheckInterval, timeout: Self.storeCheckTimeout)
        guard reached.error == nil else { return false }
        return (try? await store.checkWritable()) != nil
    }

    func readiness() async -> Answer {
        let store = relay.engine.store
        var broker = Check(ok: relay.client.isConnected)
        if !broker.ok { broker.error = "not connected to the broker" }

        let writes = await store.writeStatus()
        let reached = await storeCheck.result(
            of: store, every: Self.storeCheckInterval, timeout: Self.storeCheckTimeout)
        var storeCheck = Check(
            ok: writes.writable && reached.error == nil,
            detail: ["failed_commits": writes.failedCommits, "checked_s_ago": reached.age])
        storeCheck.error = writes.error.map { "the state store cannot commit: \($0)" } ?? reached.error

        var backlog = Check(
            ok: true,
            detail: [
                "unwritten_changes": writes.unwrittenChanges,
                "oldest_unwritten_change_s": writes.oldestUnwrittenChangeSeconds ?? 0
            ])
        if writes.unwrittenChanges > Self.backlogLimit {
            backlog.ok = false
            backlog.error = "\(writes.unwrittenChanges) changes wait to be written (more than \(Self.backlogLimit))"
        } else if let age = writes.oldestUnwrittenChangeSeconds, age > Self.backlogAgeLimit {
            backlog.ok = false
            backlog.error =
                "the oldest unwritten change has waited \(Int(age)) s (more than \(Int(Self.backlogAgeLimit)) s)"
        }
        let checks = ["broker": broker, "store": storeCheck, "backlog": backlog]
        return Answer(
            status: checks.values.allSatisfy(\.ok) ? "ready" : "unavailable", checks: checks, bridges: links())
    }
}

/// One link of a bridge to its upstream broker, as readiness shows it.
package struct ProbeLink: Sendable {
    /// The bridge's name.
    package var name: String
    /// `out` (the forwarder) or `in` (the receiver).
    package var direction: String
    package var connected: Bool
    /// True on a relay of a share group while another relay of the group holds this link.
    package var standby: Bool

    package init(name: String, direction: String, connected: Bool, standby: Bool = false) {
        self.name = name
        self.direction = direction
        self.connected = connected
        self.standby = standby
    }

    var json: [String: Bool] { standby ? ["connected": connected, "standby": true] : ["connected": connected] }
}
