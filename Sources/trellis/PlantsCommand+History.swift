import TrellisApplication
import ArgumentParser
import Foundation
import Logging
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
            let now = Date()
            let from = DeadLetterSince.parse(since, now: now) ?? now
            let (place, configuration) = try await location.resolve()
            let rawSince = now.addingTimeInterval(-Double(configuration.int("history.raw_days")) * 86_400)
            let plan = HistoryPlan(from: from, to: now, step: step, rawSince: rawSince)
            var logger = Logger(label: "trellis.plants")
            logger.logLevel = .warning
            let points: [HistoryPoint]?
            do {
                points = try await place.withStore(.read, owner: "trellis-plants-history", logger: logger) { store in
                    try await store.history(of: .plant(name), plan: plan)
                }
            } catch let error as StateAccessError {
                throw fail("\(error)")
            } catch {
                throw fail("cannot read the history: \(error)")
            }
            guard let points else { throw fail("no plant is named \"\(name)\" in \(place.description)") }
            if csv {
                print(
                    "at,count,moisture_min,moisture_mean,moisture_max,temperature_min,temperature_mean,temperature_max")
                for point in points { print(Self.csvLine(point)) }
            } else {
                print("\(name): \(points.count) points of \(plan.step) s (\(plan.resolution.rawValue)), oldest first")
                for point in points { print(Self.line(point)) }
            }
        }

        /// One point as CSV.
        static func csvLine(_ point: HistoryPoint) -> String {
            [
                ISO8601Time.format(point.at), "\(point.count)", "\(point.moistureMin)", number(point.moistureMean),
                "\(point.moistureMax)", number(point.temperatureMin), number(point.temperatureMean),
                number(point.temperatureMax)
            ].joined(separator: ",")
        }

        /// One point as a line for a terminal.
        static func line(_ point: HistoryPoint) -> String {
            "\(ISO8601Time.format(point.at))  \(point.count) readings  moisture \(point.moistureMin)/"
                + "\(number(point.moistureMean))/\(point.moistureMax)  temperature \(number(point.temperatureMin))/"
                + "\(number(point.temperatureMean))/\(number(point.temperatureMax)) °F"
        }

        /// A number with at most two decimals.
        static func number(_ value: Double) -> String {
            let rounded = (value * 100).rounded() / 100
            return rounded == rounded.rounded() ? String(format: "%.1f", rounded) : "\(rounded)"
        }
    }
}
