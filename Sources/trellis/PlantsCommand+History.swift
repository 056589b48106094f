import TrellisApplication
import ArgumentParser
import Foundation
import TrellisCore
import TrellisStore

extension PlantsCommand {
    /// `trellis plants history NAME`: a plant's readings over a span back from now, as
    /// `plants/history` answers them, read from the store directly.
    struct History: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "history",
            abstract: "Print a plant's history of readings.",
            discussion: """
                \(StateStoreLocation.readsDirectly), and prints at most 1,000 points from --since to now, oldest first: each \
                the start of its bucket (UTC), how many readings it holds, and the minimum, mean and maximum of \
                moisture and temperature, as trellis/request/plants/history answers. The points are the raw \
                readings' when the span lies within history.raw_days and the step is under an hour, else the \
                hours'. --csv prints the same as CSV with a header line. Exits 0 (also when there is no reading), \
                1 when no plant has that name or the state cannot be read.
                """
        )

        @Argument(help: ArgumentHelp("The plant's name.", valueName: "name"))
        var name: String

        @Option(
            name: .long,
            help: ArgumentHelp(
                "How far back: a span (90m, 24h, 7d, 2w), an ISO 8601 time or Unix seconds.", valueName: "time"))
        var since = "7d"

        @Option(name: .long, help: ArgumentHelp("The finest bucket wanted, in seconds.", valueName: "seconds"))
        var step: Int?

        @Flag(name: .long, help: "Print CSV, with a header line.")
        var csv = false

        @OptionGroup var location: StateStoreLocation

        func validate() throws {
            let now = Date()
            guard let from = DeadLetterSince.parse(since, now: now), from < now, from >= HistoryRequest.earliest else {
                throw ValidationError(
                    "--since must be a span such as 7d, or an ISO 8601 time or Unix seconds before now, from 1970 on")
            }
            if let step, !(1...HistoryRequest.maxStep).contains(step) {
                throw ValidationError("--step must be from 1 to \(HistoryRequest.maxStep) seconds")
            }
        }

        func run() async throws {
            for line in try await lines() { print(line) }
        }

        /// What `run` prints (``PlantHistoryListing``).
        func lines() async throws -> [String] {
            let now = Date()
            let (place, configuration) = try await location.resolve()
            return try await PlantHistoryListing.lines(
                of: name, from: DeadLetterSince.parse(since, now: now) ?? now, to: now, step: step,
                rawDays: configuration.int("history.raw_days"), csv: csv, at: place)
        }
    }
}
