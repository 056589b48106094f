import TrellisCore

/// The retained sweep of a running relay: once after the first announcement of a start, and again
/// after the announcement that follows a change of discovery prefix (the earlier prefix swept too).
extension RelayService {
    /// Runs the sweep if one is due; called by the announcement task once it has published. A
    /// sweep that fails is logged and not retried until the next prefix change or start: what it
    /// would clear does no harm beyond the ghost entities it leaves.
    func sweepIfDue() async {
        guard let earlier = dueSweep.withLock({ due -> [String]? in
            defer { due = nil }
            return due
        }) else { return }
        let engine = self.engine
        let settings = engine.settings
        let discovery = settings.homeAssistant ?? HomeAssistantDiscovery(trellisPrefix: settings.trellisPrefix)
        // Off, Trellis's configs under the configured prefix are stale too.
        let off = settings.homeAssistant == nil ? [settings.discoveryPrefix] : []
        let plan = RetainedSweepPlan(discoveryPrefix: settings.homeAssistant?.prefix, earlierPrefixes: earlier + off,
                                     nodeBase: discovery.base, trellisPrefix: settings.trellisPrefix)
        do {
            let outcome = try await RetainedSweep(plan: plan, engine: engine, logger: logger).run(on: client, inbox: sweepInbox)
            logger.info("swept the retained topics", metadata: ["read": "\(outcome.read)", "cleared": "\(outcome.cleared.count)"])
        } catch {
            logger.warning("could not sweep stale retained topics; they stay until the next start",
                           metadata: ["error": "\(error)"])
        }
    }
}
