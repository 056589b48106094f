import Foundation
import ServiceLifecycle
import Testing
import TrellisCore
import TrellisRelay
import TrellisStore
import TrellisTestSupport

/// The history's compaction as a service of the group (a ``PeriodicService``): it compacts at once,
/// and a graceful shutdown ends its wait for the next run.
@Suite("History compaction on a schedule")
struct HistoryServiceTests {
    @Test("readings older than the raw retention are folded into their hour; a shutdown ends the wait")
    func compactsThenStops() async throws {
        // The next run is an hour away: the group's shutdown ends that wait, not its end.
        var settings = RelaySettings()
        settings.historyCompactionInterval = 3600
        try await withUnconnectedService(.directory, settings: settings) { relay in
            let store = relay.engine.store
            let now = Date()
            let old = now.addingTimeInterval(-20 * 86_400)
            try await store.recordReading(sensor: "0x50", moisture: 4, temperature: 70, at: old)
            // The raw readings alone (a plan at a one-minute step from before the reading), and the hours
            // with them.
            let from = old.addingTimeInterval(-3600)
            let raw = HistoryPlan(from: from, to: now, step: 60, rawSince: from)
            let hourly = HistoryPlan(from: from, to: now, step: 3600, rawSince: now)
            #expect(try await store.history(of: .sensor("0x50"), plan: raw)?.map(\.count) == [1])

            let group = ServiceGroup(
                services: [HistoryService.service(relay: relay, logger: relay.engine.logger)],
                gracefulShutdownSignals: [], cancellationSignals: [], logger: relay.engine.logger)
            let running = Task { try await group.run() }
            try await eventually("the old reading is folded into its hour") {
                try await store.history(of: .sensor("0x50"), plan: raw) == []
            }
            #expect(try await store.history(of: .sensor("0x50"), plan: hourly)?.map(\.count) == [1])
            let asked = ContinuousClock.now
            await group.triggerGracefulShutdown()
            try await running.value
            #expect(ContinuousClock.now - asked < .seconds(30), "the shutdown waited for the next run")
        }
    }
}
