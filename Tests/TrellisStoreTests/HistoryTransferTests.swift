import Foundation
import Testing
import TrellisCore
@testable import TrellisStore
@testable import TrellisStoreSQLite
import TrellisTestSupport

/// The history goes wherever the state goes: into a backup and back by a restore, and through a
/// state copy into either store, raw readings and hours alike.
@Suite("History in backups, restores and copies")
struct HistoryTransferTests {
    static let now = instant(30 * 86_400)
    /// A plan over the whole month, hourly, and one over the last day, raw.
    static let plans = [
        HistoryPlan(from: instant(0), to: now, step: nil, rawSince: now.addingTimeInterval(-14 * 86_400)),
        HistoryPlan(
            from: now.addingTimeInterval(-86_400), to: now, step: nil, rawSince: now.addingTimeInterval(-14 * 86_400))
    ]

    /// Fern on 0x36 with a reading every two hours for a month, compacted: raw rows and hours both.
    static func fill(_ store: any TrellisStore) async throws {
        _ = try await store.addPlant(name: "Fern", sensors: ["0x36"], maxPlants: 5)
        for index in 0..<360 {
            try await store.recordReading(
                sensor: "0x36", moisture: index % 10 + 1, temperature: 60 + Double(index % 7),
                at: instant(Double(index) * 7200))
        }
        #expect(try await store.compactHistory(.standard, now: now).folded > 0)
    }

    static func answers(_ store: any TrellisStore) async throws -> [[HistoryPoint]?] {
        var answers: [[HistoryPoint]?] = []
        for plan in plans { answers.append(try await store.history(of: .plant("Fern"), plan: plan)) }
        return answers
    }

    @Test("a backup holds the history, and a restore brings it back")
    func backupAndRestore() async throws {
        let state = TemporaryDirectory(), backups = TemporaryDirectory(), restored = TemporaryDirectory()
        defer { state.remove(); backups.remove(); restored.remove() }
        let store = try SQLiteStore(directory: state.path)
        try await Self.fill(store)
        let expected = try await Self.answers(store)
        #expect(expected.allSatisfy { ($0?.count ?? 0) > 0 })
        let file = try await store.backup(into: backups.path, keep: 1, at: Self.now)
        try await store.close()
        _ = try SQLiteBackup.restore(file.path, intoStateDirectory: restored.path)
        let back = try SQLiteStore(directory: restored.path)
        #expect(try await Self.answers(back) == expected)
        try await back.close()
    }

    @Test("a state copy carries the history, and the copy goes on recording", arguments: StoreKind.bothStores)
    func copy(_ kind: StoreKind) async throws {
        let source = try SQLiteStore.inMemory()
        try await Self.fill(source)
        let expected = try await Self.answers(source)
        let dump = try await source.exportState()
        try await source.close()
        #expect(dump.tables.first { $0.name == "reading_raw" }?.rows.isEmpty == false)
        #expect(dump.tables.first { $0.name == "reading_hourly" }?.rows.isEmpty == false)
        try await withStore(kind) { target in
            let importing = try #require(target as? any StateImporting)
            try await importing.importState(dump, replacing: false)
            #expect(try await Self.answers(target) == expected)
            try await target.recordReading(sensor: "0x36", moisture: 5, temperature: 70, at: Self.now)
            let recent = HistoryPlan(
                from: Self.now.addingTimeInterval(-60), to: Self.now.addingTimeInterval(1), step: nil,
                rawSince: Self.now.addingTimeInterval(-86_400))
            #expect(try await target.history(of: .sensor("0x36"), plan: recent)?.map(\.count) == [1])
        }
    }
}
