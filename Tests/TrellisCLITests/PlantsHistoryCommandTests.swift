import Foundation
import Testing
import TrellisCore
import TrellisStore
import TrellisStorePostgres
import TrellisStoreSQLite
import TrellisTestSupport

/// `trellis plants history NAME`: a plant's readings read from the store by the command line, as
/// text and as CSV, on SQLite (--state) and PostgreSQL (--store).
@Suite("trellis plants history")
struct PlantsHistoryCommandTests {
    /// Fern on 0x36 with a reading an hour for three days, ending an hour ago, and Basil with none.
    static func record(into store: any TrellisStore) async throws {
        _ = try await store.addPlant(name: "Fern", sensors: ["0x36"], maxPlants: 5)
        _ = try await store.addPlant(name: "Basil", sensors: ["0x37"], maxPlants: 5)
        let now = Date()
        for hour in 1...72 {
            try await store.recordReading(
                sensor: "0x36", moisture: hour % 10 + 1, temperature: 70.5,
                at: now.addingTimeInterval(-Double(hour) * 3600))
        }
        try await store.flush()
    }

    @Test(
        "prints the points of a span as text and CSV; an unknown plant exits 1",
        arguments: DeadLettersCommandTests.Where.available)
    func history(_ place: DeadLettersCommandTests.Where) async throws {
        try await withState(place) { location in
            let day = try await TrellisBinary.run(["plants", "history", "Fern", "--since", "1d", "--csv"] + location)
            #expect(day.status == 0, "\(day.output)")
            let lines = day.output.split(separator: "\n").map(String.init)
            #expect(
                lines.first
                    == "at,count,moisture_min,moisture_mean,moisture_max,temperature_min,temperature_mean,temperature_max"
            )
            // The readings 1 to 23 hours ago (the one 24 hours ago is at the span's start, or just before it).
            #expect((23...24).contains(lines.count - 1), "\(day.output)")
            let last = lines.last?.split(separator: ",").map(String.init) ?? []
            #expect(last.count == 8 && last[1] == "1" && last[2] == "2" && last[5] == "70.5", "\(lines)")
            #expect(ISO8601Time.parse(last.first ?? "") != nil)

            let text = try await TrellisBinary.run(["plants", "history", "Fern"] + location)
            #expect(text.status == 0, "\(text.output)")
            #expect(text.output.contains("Fern: 72 points of 605 s (raw)"), "\(text.output)")
            #expect(
                text.output.contains("1 readings  moisture 2/2.0/2  temperature 70.5/70.5/70.5 °F"), "\(text.output)")

            let empty = try await TrellisBinary.run(["plants", "history", "Basil", "--since", "2w"] + location)
            #expect(empty.status == 0 && empty.output.contains("Basil: 0 points"), "\(empty.output)")
            let unknown = try await TrellisBinary.run(["plants", "history", "Nobody"] + location)
            #expect(unknown.status == 1 && unknown.output.contains("no plant is named \"Nobody\""), "\(unknown.output)")
            let bad = try await TrellisBinary.run(["plants", "history", "Fern", "--since", "soon"] + location)
            #expect(bad.status != 0 && bad.output.contains("--since"), "\(bad.output)")
        }
    }

    /// Runs `body` with the arguments that name a state holding the plants.
    func withState(_ place: DeadLettersCommandTests.Where, _ body: ([String]) async throws -> Void) async throws {
        try await place.withState(recorded: Self.record) { _, arguments in try await body(arguments) }
    }
}
