import TrellisCore

/// The retained sweep of a running relay: once after the first announcement of a start, and again
/// after the announcement that follows a change of discovery prefix (the earlier prefix swept too).
extension RelayService {
    /// Runs the sweep if one is due; called by the announcement task once it has published. A
    /// sweep that fails is logged and not retried until the next prefix change or start: what it
    /// would clear does no harm beyond the ghost entities it leaves. A sweep cancelled because
    /// another announcement replaced this one (a thing created meanwhile) stays due, for the
    /// announcement that follows: otherwise a start whose first seconds brought a new button
    /// would never sweep.
    func sweepIfDue() async {
        guard
            let earlier = dueSweep.withLock({ due -> [String]? in
                defer { due = nil }
                return due
            })
        else { return }
        let engine = self.engine
        do {
            let sweep = RetainedSweep(plan: sweepPlan(earlier: earlier), engine: engine, logger: logger)
            let outcome = try await sweep.run(on: outlet, inbox: sweepInbox)
            logger.info(
                "swept the retained topics",
                metadata: ["read": "\(outcome.read)", "cleared": "\(outcome.cleared.count)"])
        } catch  where error is CancellationError || Task.isCancelled {
            dueSweep.withLock { $0 = earlier + ($0 ?? []) }
            logger.debug("retained sweep cancelled; it runs after the next announcement")
        } catch {
            logger.warning(
                "could not sweep stale retained topics; they stay until the next start",
                metadata: ["error": "\(error)"])
        }
    }

    /// What a sweep reads now, with `earlier` discovery prefixes swept as not current.
    func sweepPlan(earlier: [String] = []) -> RetainedSweepPlan {
        let settings = engine.settings
        let discovery = settings.homeAssistant ?? HomeAssistantDiscovery(trellisPrefix: settings.trellisPrefix)
        // Off, Trellis's configs under the configured prefix are stale too.
        let off = settings.homeAssistant == nil ? [settings.discoveryPrefix] : []
        return RetainedSweepPlan(
            discoveryPrefix: settings.homeAssistant?.prefix, earlierPrefixes: earlier + off,
            nodeBase: discovery.base, trellisPrefix: settings.trellisPrefix)
    }

    /// Before the first connection: a relay stopped in the middle of a sweep left its subscriptions
    /// in its persistent session, so what they bring is taken off the routes until the start's own
    /// sweep subscribes and unsubscribes them again.
    func guardLeftoverSweep() {
        let plan = sweepPlan()
        sweepInbox.withLock { $0 = SweepInbox(plan: plan, marker: "\(plan.trellisPrefix)/sweep/leftover") }
    }
}
