import Foundation
import Logging
import Synchronization
import TrellisCore
import TrellisRelay
import TrellisStore

/// Watches the lasting conditions the rules ask about (docs/notifications.md) every
/// ``interval``: sensors silent since their latest reading and devices offline (from the store),
/// the broker's and each bridge's links and the store's writes (from this process). What
/// ``NotificationRouter/notifications(lasting:at:)`` makes of them goes to the outbox, which keeps
/// each condition's notification once, whichever relay or pass saw it first.
///
/// A store that refuses writes cannot keep its own notification, so `store_unwritable` is sent
/// straight through its channels from memory, once per spell, when its quiet hours allow: through
/// the ``NotificationChannels`` the outbox's service sends through, so it is held to the channel's
/// rate and counted in its metrics like any other.
package final class NotificationWatch: Sendable {
    /// How often the conditions are looked at.
    package static let interval: TimeInterval = 15

    /// One link as this process sees it: `up` while connected or standing by for a share group.
    package struct Link: Sendable {
        package var name: String
        package var up: Bool

        package init(name: String, up: Bool) { (self.name, self.up) = (name, up) }
    }

    private struct State {
        /// When each link or the store was first seen down in this spell.
        var downSince: [String: Date] = [:]
        /// Direct notifications not yet sent, by event key and channel, and those sent.
        var waiting: [String: PendingNotification] = [:]
        var sent: Set<String> = []
    }

    let router: NotificationRouter
    let store: any TrellisStore
    let links: @Sendable () -> [Link]
    let channels: NotificationChannels
    let logger: Logger
    private let state = Mutex(State())

    package init(
        store: any TrellisStore, channels: NotificationChannels, logger: Logger,
        links: @escaping @Sendable () -> [Link]
    ) {
        (router, self.store, self.channels, self.logger, self.links) = (
            NotificationRouter(plan: channels.plan), store, channels, logger, links
        )
    }

    /// Whether any rule watches a lasting condition; without one there is nothing to run.
    package static func isNeeded(for plan: NotificationPlan) -> Bool {
        plan.rules.contains { $0.when.defaultAfter != nil }
    }

    /// The conditions that hold at `now`.
    package func conditions(at now: Date) async -> [LastingCondition] {
        let plan = router.plan
        var found: [LastingCondition] = []
        do {
            if !plan.rules(for: .sensorSilent).isEmpty, let records = try await store.sensorRecords(plant: nil) {
                var seen = Set<String>()
                for record in records where seen.insert(record.sensor).inserted {
                    guard let at = record.at else { continue }
                    found.append(
                        LastingCondition(
                            event: .sensorSilent, subject: record.sensor,
                            label: "sensor \(record.sensor) of \(record.plant)", since: at))
                }
            }
            if !plan.rules(for: .deviceOffline).isEmpty {
                for device in try await store.offlineDevices() {
                    let label = device.name.map { "\($0) (\(device.id))" } ?? "Device \(device.id)"
                    found.append(
                        LastingCondition(event: .deviceOffline, subject: device.id, label: label, since: device.since))
                }
            }
        } catch {
            logger.warning("could not read the watched conditions from the store: \(error)")
        }
        let writes = await store.writeStatus()
        var down = links().filter { !$0.up }.map { ($0.name, nil as String?) }
        if !writes.writable { down.append(("store", writes.error)) }
        let since = state.withLock { state in
            state.downSince = state.downSince.filter { name, _ in down.contains { $0.0 == name } }
            for (name, _) in down where state.downSince[name] == nil { state.downSince[name] = now }
            return state.downSince
        }
        for (name, detail) in down {
            let start = since[name] ?? now
            found.append(
                name == "store"
                    ? LastingCondition(
                        event: .storeUnwritable, subject: "store", label: "store", since: start, detail: detail)
                    : LastingCondition(event: .linkDown, subject: name, label: name, since: start))
        }
        return found
    }

    /// One look: the conditions due at `now` queued (or, for the store, sent).
    package func pass(now: Date) async {
        let due = router.notifications(lasting: await conditions(at: now), at: now)
        let direct = due.filter { $0.notification.eventKey.hasPrefix("store_unwritable:") }
        state.withLock { state in
            // A spell that ended before its notification went out sends nothing.
            let keys = Set(direct.map { $0.notification.channel + " " + $0.notification.eventKey })
            state.waiting = state.waiting.filter { keys.contains($0.key) }
            for pending in direct {
                let key = pending.notification.channel + " " + pending.notification.eventKey
                if !state.sent.contains(key), state.waiting[key] == nil { state.waiting[key] = pending }
            }
        }
        await NotificationRouter.keep(
            due.filter { !$0.notification.eventKey.hasPrefix("store_unwritable:") }, in: store, logger: logger)
        await sendWaiting(now: now)
    }

    /// Sends the direct notifications whose time has come; one that fails is tried at the next pass.
    func sendWaiting(now: Date) async {
        let ready = state.withLock { state in state.waiting.filter { $0.value.notification.due <= now } }
        for (key, pending) in ready {
            switch await channels.send(pending.notification, now: now) {
            case .sent:
                state.withLock { state in
                    state.waiting[key] = nil
                    state.sent.insert(key)
                }
            case .unknownChannel, .rateLimited:
                // Configured channels only reach here; at its rate, the channel is tried at the next pass.
                break
            case let .failed(reason):
                logger.warning(
                    "a notification was not sent; it is tried again",
                    metadata: ["channel": "\(pending.notification.channel)", "reason": "\(reason)"])
            }
        }
    }

    /// The watch as a service: a pass every ``interval`` seconds.
    package func service() -> PeriodicService {
        PeriodicService(interval: { Self.interval }, work: { await self.pass(now: Date()) })
    }
}
