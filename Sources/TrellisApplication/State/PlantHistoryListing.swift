import Foundation
import Logging
import TrellisCore
import TrellisStore

/// What `trellis plants history NAME` prints: a plant's readings over a span back from now, read
/// from the store (never made by reading it) as `trellis/request/plants/history` answers them, as
/// lines for a terminal or as CSV.
package enum PlantHistoryListing {
    /// The header line of the CSV.
    package static let csvHeader =
        "at,count,moisture_min,moisture_mean,moisture_max,temperature_min,temperature_mean,temperature_max"

    /// The lines for the plant `name` from `from` to `now` in the state at `place`, oldest first: the
    /// finest bucket `step` seconds when given, the raw readings' while the span lies within the
    /// `rawDays` they are kept. No plant of that name, no state, or a state that cannot be read is a
    /// ``CommandFailure`` saying so.
    package static func lines(
        of name: String, from: Date, to now: Date, step: Int?, rawDays: Int, csv: Bool, at place: StatePlace
    ) async throws -> [String] {
        let plan = HistoryPlan(
            from: from, to: now, step: step, rawSince: now.addingTimeInterval(-Double(rawDays) * 86_400))
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
        if csv { return [csvHeader] + points.map(csvLine) }
        return ["\(name): \(points.count) points of \(plan.step) s (\(plan.resolution.rawValue)), oldest first"]
            + points.map(line)
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
