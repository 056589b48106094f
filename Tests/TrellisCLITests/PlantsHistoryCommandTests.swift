import Foundation
import Testing
import TrellisApplication
import TrellisCore
import TrellisStore
import TrellisStorePostgres
import TrellisStoreSQLite
import TrellisTestSupport
@testable import trellis

/// `trellis plants history NAME`: a plant's readings read from the store by the command line, as
/// text and as CSV, on SQLite (--state) and PostgreSQL (--store), run in the process with the options
/// parsed as the command parses them (`PlantHistoryListing`). The `plants` family's run of the binary
/// is `PlantsImportHostTests`'.
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

    /// What `trellis plants history ARGUMENTS` prints, run in the process as the command runs.
    static func printed(_ arguments: [String]) async throws -> [String] {
        try await PlantsCommand.History.parse(arguments).lines()
    }

    @Test(
        "prints the points of a span as text and CSV; an unknown plant is refused, naming it",
        arguments: DeadLettersCommandTests.Where.available)
    func history(_ place: DeadLettersCommandTests.Where) async throws {
        try await withState(place) { location in
            let lines = try await Self.printed(["Fern", "--since", "1d", "--csv"] + location)
            #expect(
                lines.first
                    == "at,count,moisture_min,moisture_mean,moisture_max,temperature_min,temperature_mean,temperature_max"
            )
            // The readings 1 to 23 hours ago (the one 24 hours ago is at the span's start, or just before it).
            #expect((23...24).contains(lines.count - 1), "\(lines)")
            let last = lines.last?.split(separator: ",").map(String.init) ?? []
            #expect(last.count == 8 && last[1] == "1" && last[2] == "2" && last[5] == "70.5", "\(lines)")
            #expect(ISO8601Time.parse(last.first ?? "") != nil)

            let text = try await Self.printed(["Fern"] + location).joined(separator: "\n")
            #expect(text.contains("Fern: 72 points of 605 s (raw)"), "\(text)")
            #expect(text.contains("1 readings  moisture 2/2.0/2  temperature 70.5/70.5/70.5 °F"), "\(text)")

            let empty = try await Self.printed(["Basil", "--since", "2w"] + location)
            #expect(empty.first?.hasPrefix("Basil: 0 points") == true, "\(empty)")
            // A CommandFailure: the executable prints it and exits 1.
            await #expect {
                try await Self.printed(["Nobody"] + location)
            } throws: {
                $0 is CommandFailure && "\($0)".contains("no plant is named \"Nobody\"")
            }
            #expect {
                try PlantsCommand.History.parse(["Fern", "--since", "soon"] + location)
            } throws: {
                PlantsCommand.History.message(for: $0).contains("--since")
            }
        }
    }

    /// Runs `body` with the arguments that name a state holding the plants.
    func withState(_ place: DeadLettersCommandTests.Where, _ body: ([String]) async throws -> Void) async throws {
        try await place.withState(recorded: Self.record) { _, arguments in try await body(arguments) }
    }
}
