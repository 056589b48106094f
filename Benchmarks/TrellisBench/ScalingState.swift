import Foundation
import TrellisCore
import TrellisStore
import TrellisStoreSQLite

/// The state of `trellis-bench --scaling` at a scale: the bench's state grown `scale` times, built
/// as a ``StateDump`` and written into a fresh store in one transaction (`trellis store copy`'s path),
/// so that even the 100× state (a million buttons, a million device log lines) is ready in seconds.
///
/// At 1×: 10,000 buttons pressed once, 1,000 clients online, 100 of them registered for button
/// `b0`, 50 devices with 200 log lines each (the log's limit), 1,000 catalog species and 100 dead
/// letters. Every count grows with the scale, but the dead letters stop at the 10,000 the store
/// keeps. Beside them, at every scale, the listener series' buttons: `n10`, `n100`, `n1000` and
/// `n10000`, each with that many registered clients (`l0`…`l9999`, online).
struct ScalingState {
    let scale: Int

    var buttons: Int { 10_000 * scale }
    var clients: Int { 1_000 * scale }
    var listeners: Int { 100 * scale }
    var devices: Int { 50 * scale }
    static let logLines = 200
    var species: Int { 1_000 * scale }
    var deadLetters: Int { min(10_000, 100 * scale) }
    static let listenerSeries = [10, 100, 1_000, 10_000]

    /// Things Home Assistant is told about: the 7 plants, every button and every device.
    var things: Int { 7 + buttons + Self.listenerSeries.count + devices }

    /// The whole state as a dump: species through the store (which derives their search columns),
    /// every other table generated row by row.
    func dump() async throws -> StateDump {
        let scratch = try SQLiteStore.inMemory()
        try await scratch.upsertSpecies(BenchCatalog.species(count: species))
        var dump = try await scratch.exportState()
        try await scratch.close()
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        var rows = Rows(dump)
        for index in 0..<buttons {
            rows.add("button", ["id": .text("b\(index)"), "total": .integer(1)])
            rows.add(
                "button_press", ["id": .integer(Int64(index + 1)), "button_id": .text("b\(index)"), "at": .integer(now)]
            )
        }
        for index in 0..<clients {
            rows.add("client", ["id": .text("c\(index)"), "online": .integer(1), "status_at": .integer(now)])
        }
        for index in 0..<listeners {
            rows.add(
                "registration",
                [
                    "button_id": .text("b0"), "client_id": .text("c\(index)"), "missed": .integer(0),
                    "registered_at": .integer(now)
                ])
        }
        for index in 0..<(Self.listenerSeries.max() ?? 0) {
            rows.add("client", ["id": .text("l\(index)"), "online": .integer(1), "status_at": .integer(now)])
        }
        for count in Self.listenerSeries {
            rows.add("button", ["id": .text("n\(count)"), "total": .integer(0)])
            for index in 0..<count {
                rows.add(
                    "registration",
                    [
                        "button_id": .text("n\(count)"), "client_id": .text("l\(index)"),
                        "missed": .integer(0), "registered_at": .integer(now)
                    ])
            }
        }
        var logID: Int64 = 0
        for device in 0..<devices {
            rows.add("device", ["id": .text("d\(device)"), "online": .integer(1), "registered_at": .integer(now)])
            for line in 0..<Self.logLines {
                logID += 1
                rows.add(
                    "device_log",
                    [
                        "id": .integer(logID), "device_id": .text("d\(device)"),
                        "at": .integer(now - 1_000 + Int64(line)),
                        "type": .text("Device"), "message": .text("line \(line) of device \(device)")
                    ])
            }
        }
        for index in 0..<deadLetters {
            rows.add(
                "dead_letter",
                [
                    "id": .integer(Int64(index + 1)), "reason": .text("unknown_topic"),
                    "topic": .text("bench/\(index)"),
                    "payload": .blob(Array("letter \(index)".utf8)), "received_at": .integer(now),
                    "client_key": .text("")
                ])
        }
        dump = rows.dump
        return dump
    }

    /// A dump's tables, filled by column name: a column not named is NULL.
    private struct Rows {
        var dump: StateDump
        private var positions: [String: Int] = [:]

        init(_ dump: StateDump) {
            self.dump = dump
            for (index, table) in dump.tables.enumerated() { positions[table.name] = index }
        }

        mutating func add(_ table: String, _ values: [String: DumpValue]) {
            guard let index = positions[table] else { preconditionFailure("no table \(table) in the dump") }
            let columns = dump.tables[index].columns
            dump.tables[index].rows.append(columns.map { values[$0] ?? .null })
        }
    }
}
