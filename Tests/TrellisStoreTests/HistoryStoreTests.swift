import Foundation
import Testing
import TrellisCore
@testable import TrellisStore
import TrellisTestSupport

/// The history of readings on every store: raw readings folded into hours, late readings, the
/// per-sensor cap, expiry, and answers checked against values computed here from the readings.
@Suite("HistoryStore")
struct HistoryStoreTests {
    /// The readings of one sensor every `every` seconds from `start`, `count` of them, with values
    /// that vary within each hour and from hour to hour.
    static func readings(count: Int, every: Double, from start: Date) -> [(at: Date, moisture: Int, temp: Double)] {
        (0..<count).map { (index: Int) -> (at: Date, moisture: Int, temp: Double) in
            let at = start.addingTimeInterval(Double(index) * every)
            let moisture: Int = 1 + (index * 7 + index / 60) % 10
            let temp: Double = 60 + Double(index % 97) / 4
            return (at, moisture, temp)
        }
    }

    /// What `plan` should answer for `readings`, computed from the readings themselves.
    static func expected(_ readings: [(at: Date, moisture: Int, temp: Double)], plan: HistoryPlan) -> [HistoryPoint] {
        var buckets: [Int64: [(at: Date, moisture: Int, temp: Double)]] = [:]
        for reading in readings {
            let at = ISO8601Time.milliseconds(reading.at)
            guard at >= plan.origin, at < plan.end else { continue }
            buckets[(at - plan.origin) / plan.width, default: []].append(reading)
        }
        return buckets.keys.sorted().map { bucket in
            let members = buckets[bucket]!
            let count = Double(members.count)
            return HistoryPoint(
                at: Date(timeIntervalSince1970: Double(plan.origin + bucket * plan.width) / 1000), count: members.count,
                moistureMin: members.map(\.moisture).min()!,
                moistureMean: Double(members.map(\.moisture).reduce(0, +)) / count,
                moistureMax: members.map(\.moisture).max()!, temperatureMin: members.map(\.temp).min()!,
                temperatureMean: members.map(\.temp).reduce(0, +) / count, temperatureMax: members.map(\.temp).max()!)
        }
    }

    /// Whether `answer` is `expected`, the means within rounding (sums are taken in another order).
    static func same(_ answer: [HistoryPoint], _ expected: [HistoryPoint]) -> Bool {
        guard answer.count == expected.count else { return false }
        return zip(answer, expected).allSatisfy { a, b in
            a.at == b.at && a.count == b.count && a.moistureMin == b.moistureMin && a.moistureMax == b.moistureMax
                && a.temperatureMin == b.temperatureMin && a.temperatureMax == b.temperatureMax
                && abs(a.moistureMean - b.moistureMean) < 1e-9 && abs(a.temperatureMean - b.temperatureMean) < 1e-9
        }
    }

    /// Rows in `table`, from the store's dump.
    static func rows(_ table: String, in store: any TrellisStore) async throws -> [[DumpValue]] {
        let dump = try await (store as! any StateExporting).exportState()
        return dump.tables.first { $0.name == table }?.rows ?? []
    }

    @Test("a month, a reading every 5 minutes: a day, a week and a month match", arguments: StoreKind.bothStores)
    func month(_ kind: StoreKind) async throws {
        try await withStore(kind) { store in
            let start = instant(0)
            let now = start.addingTimeInterval(30 * 86_400)
            let perDay = 288
            let readings = Self.readings(count: 30 * perDay, every: 86_400 / Double(perDay), from: start)
            _ = try await store.addPlant(name: "Fern", sensors: ["0x36"], maxPlants: 5)
            // Eight at a time: each lands in its place by its time, and PostgreSQL's round trips overlap.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (index, reading) in readings.enumerated() {
                    if index >= 8 { try await group.next() }
                    group.addTask {
                        try await store.recordReading(
                            sensor: "0x36", moisture: reading.moisture, temperature: reading.temp, at: reading.at)
                    }
                }
                try await group.waitForAll()
            }
            let retention = HistoryRetention.standard
            let compaction = try await store.compactHistory(retention, now: now)
            #expect(compaction.folded > 16 * perDay - 12 && compaction.folded <= 16 * perDay + 12)
            #expect(compaction.dropped == 0 && compaction.expired == 0)
            let rawSince = now.addingTimeInterval(-14 * 86_400)
            for (days, resolution) in [(1.0, HistoryPlan.Resolution.raw), (7, .raw), (30, .hourly)] {
                let plan = HistoryPlan(
                    from: now.addingTimeInterval(-days * 86_400), to: now, step: nil, rawSince: rawSince)
                #expect(plan.resolution == resolution)
                let answer = try #require(try await store.history(of: .plant("Fern"), plan: plan))
                #expect(answer.count <= 1000)
                #expect(Self.same(answer, Self.expected(readings, plan: plan)), "\(days) days")
                #expect(try await store.history(of: .sensor("0x36"), plan: plan) == answer)
            }
        }
    }

    @Test("a late reading lands in its hour, folded or not", arguments: StoreKind.allCases)
    func lateReading(_ kind: StoreKind) async throws {
        try await withStore(kind) { store in
            let now = instant(20 * 86_400)
            let old = now.addingTimeInterval(-16 * 86_400)
            try await store.recordReading(sensor: "0x10", moisture: 5, temperature: 70, at: old)
            try await store.recordReading(sensor: "0x10", moisture: 3, temperature: 71, at: now.addingTimeInterval(-60))
            let retention = HistoryRetention.standard
            #expect(try await store.compactHistory(retention, now: now).folded == 1)
            // Late for a folded hour: added into it; late for a recent hour: kept raw.
            try await store.recordReading(sensor: "0x10", moisture: 9, temperature: 60, at: old.addingTimeInterval(1))
            try await store.recordReading(
                sensor: "0x10", moisture: 4, temperature: 72, at: now.addingTimeInterval(-120))
            let plan = HistoryPlan(
                from: old.addingTimeInterval(-3600), to: now, step: nil, rawSince: now.addingTimeInterval(-14 * 86_400))
            let points = try #require(try await store.history(of: .sensor("0x10"), plan: plan))
            #expect(points.map(\.count).reduce(0, +) == 4)
            let folded = try #require(points.first)
            #expect(folded.count == 2 && folded.moistureMin == 5 && folded.moistureMax == 9 && folded.moistureMean == 7)
            #expect(folded.temperatureMin == 60 && folded.temperatureMax == 70)
            #expect(try await Self.rows("reading_raw", in: store).count == 2)
            #expect(try await Self.rows("reading_hourly", in: store).count == 1)
        }
    }

    @Test(
        "each sensor keeps at most max_rows_per_sensor rows, the oldest dropped and counted",
        arguments: StoreKind.allCases)
    func cap(_ kind: StoreKind) async throws {
        try await withStore(kind) { store in
            let now = instant(86_400)
            for minute in 0..<8 {
                let at = now.addingTimeInterval(Double(minute - 8) * 60)
                try await store.recordReading(sensor: "0x20", moisture: minute + 1, temperature: 70, at: at)
                try await store.recordReading(sensor: "0x21", moisture: 1, temperature: 70, at: at)
            }
            var retention = HistoryRetention.standard
            retention.maxRowsPerSensor = 5
            #expect(try await store.compactHistory(retention, now: now) == HistoryCompaction(dropped: 6))
            let plan = HistoryPlan(from: now.addingTimeInterval(-3600), to: now, step: 1, rawSince: instant(0))
            let kept = try #require(try await store.history(of: .sensor("0x20"), plan: plan))
            #expect(kept.map(\.moistureMin) == [4, 5, 6, 7, 8])
        }
    }

    @Test("hours older than the hourly retention are deleted", arguments: StoreKind.allCases)
    func expiry(_ kind: StoreKind) async throws {
        try await withStore(kind) { store in
            let now = instant(40 * 86_400)
            try await store.recordReading(sensor: "0x30", moisture: 2, temperature: 70, at: instant(0))
            try await store.recordReading(sensor: "0x30", moisture: 3, temperature: 70, at: instant(20 * 86_400))
            let retention = HistoryRetention(rawDays: 2, hourlyDays: 30, maxRowsPerSensor: 100)
            #expect(try await store.compactHistory(retention, now: now) == HistoryCompaction(folded: 2, expired: 1))
            #expect(try await Self.rows("reading_hourly", in: store).count == 1)
            #expect(try await store.compactHistory(retention, now: now) == HistoryCompaction())
        }
    }

    @Test(
        "a plant's history merges its sensors and names the plant; an unknown plant is nil",
        arguments: StoreKind.allCases)
    func plants(_ kind: StoreKind) async throws {
        try await withStore(kind) { store in
            let now = instant(86_400)
            _ = try await store.addPlant(name: "Fern", sensors: ["0x40", "0x41"], maxPlants: 5)
            try await store.recordReading(sensor: "0x40", moisture: 2, temperature: 70, at: now.addingTimeInterval(-50))
            try await store.recordReading(sensor: "0x41", moisture: 6, temperature: 72, at: now.addingTimeInterval(-40))
            try await store.recordReading(sensor: "0x42", moisture: 9, temperature: 72, at: now.addingTimeInterval(-30))
            let plan = HistoryPlan(from: now.addingTimeInterval(-3600), to: now, step: 3599, rawSince: instant(0))
            let points = try #require(try await store.history(of: .plant("Fern"), plan: plan))
            #expect(points.count == 1 && points[0].count == 2 && points[0].moistureMean == 4)
            #expect(try await store.history(of: .plant("Nobody"), plan: plan) == nil)
            #expect(try await store.history(of: .sensor("0x99"), plan: plan) == [])
            let plantIDs = try await Self.rows("reading_raw", in: store).map { $0[2] }
            #expect(plantIDs.filter { $0 != .null }.count == 2 && plantIDs.contains(.null))
        }
    }
}
