import Foundation
import TrellisCore

/// A plant's history as an inline SVG drawn on the server: each bucket's mean moisture (1 to 10,
/// left scale) and mean temperature (°F, right scale, dashed) against time, from `from` to `to`.
/// The chart is an image to a screen reader, named by its `<title>` and summed up by its `<desc>`;
/// the page gives the same points as a table beside it.
enum HistoryChart {
    /// The drawing's size: narrow enough that its labels stay legible scaled down to a phone's width.
    static let width = 480.0
    static let height = 260.0
    /// Room for the scales' labels around the plot.
    static let left = 30.0, right = 52.0, top = 12.0, bottom = 30.0

    /// The SVG of `points` (oldest first) over `from`…`to`, titled for `plant`.
    static func svg(plant: String, points: [HistoryPoint], from: Date, to: Date) -> HTML {
        let start = from.timeIntervalSince1970, end = max(to.timeIntervalSince1970, start + 1)
        let plotWidth = width - left - right, plotHeight = height - top - bottom
        func x(_ date: Date) -> Double {
            left + (min(max(date.timeIntervalSince1970, start), end) - start) / (end - start) * plotWidth
        }
        let temperatures = points.map(\.temperatureMean).filter(\.isFinite)
        var low = (temperatures.min() ?? 50).rounded(.down), high = (temperatures.max() ?? 90).rounded(.up)
        if high - low < 10 {
            low -= 5
            high += 5
        }
        func yMoisture(_ value: Double) -> Double { top + (1 - (min(max(value, 0), 10) / 10)) * plotHeight }
        func yTemperature(_ value: Double) -> Double {
            top + (1 - (min(max(value, low), high) - low) / (high - low)) * plotHeight
        }
        let moisture = points.filter { $0.moistureMean.isFinite }.map {
            "\(format(x($0.at))),\(format(yMoisture($0.moistureMean)))"
        }
        let temperature = points.filter { $0.temperatureMean.isFinite }.map {
            "\(format(x($0.at))),\(format(yTemperature($0.temperatureMean)))"
        }
        var grid = ""
        for step in 0...5 {
            let value = Double(step) * 2, y = format(yMoisture(value))
            let degrees = low + (high - low) * Double(step) / 5
            grid +=
                "<line class=\"grid\" x1=\"\(format(left))\" x2=\"\(format(width - right))\" y1=\"\(y)\" y2=\"\(y)\"/>"
            grid += "<text x=\"\(format(left - 6))\" y=\"\(y)\" text-anchor=\"end\" dy=\"4\">\(Int(value))</text>"
            grid +=
                "<text x=\"\(format(width - right + 6))\" y=\"\(y)\" dy=\"4\">\(ConsolePage.number(degrees))°</text>"
        }
        let axisY = format(height - bottom)
        grid +=
            "<line class=\"axis\" x1=\"\(format(left))\" x2=\"\(format(width - right))\" y1=\"\(axisY)\" y2=\"\(axisY)\"/>"
        grid += "<text x=\"\(format(left))\" y=\"\(format(height - 8))\">\(day(from))</text>"
        grid += "<text x=\"\(format(width - right))\" y=\"\(format(height - 8))\" text-anchor=\"end\">\(day(to))</text>"
        let lines =
            (moisture.count > 0 ? "<polyline class=\"moisture\" points=\"\(moisture.joined(separator: " "))\"/>" : "")
            + (temperature.count > 0
                ? "<polyline class=\"temperature\" points=\"\(temperature.joined(separator: " "))\"/>" : "")
        let summary =
            points.isEmpty
            ? "No readings from \(ISO8601Time.format(from)) to \(ISO8601Time.format(to))."
            : "\(points.count) points from \(ISO8601Time.format(points[0].at)) to "
                + "\(ISO8601Time.format(points[points.count - 1].at)): moisture \(range(points.map { Double($0.moistureMean) })), "
                + "temperature \(range(temperatures)) °F."
        return """
            <svg class="chart" role="img" aria-labelledby="chart-title chart-desc" viewBox="0 0 \(Int(width)) \(Int(height))" \
            xmlns="http://www.w3.org/2000/svg" preserveAspectRatio="xMidYMid meet">
            <title id="chart-title">Readings of \(plant)</title>
            <desc id="chart-desc">\(summary)</desc>
            \(HTML(raw: grid))\(HTML(raw: lines))
            </svg>
            """
    }

    /// `value` with one decimal, as the SVG's coordinates are written.
    static func format(_ value: Double) -> String {
        String(format: "%.1f", value.isFinite ? value : 0)
    }

    /// The date of `date` (`2026-11-30`), to label the time axis.
    static func day(_ date: Date) -> String {
        String(ISO8601Time.format(date).prefix(10))
    }

    /// `min to max` of `values`.
    static func range(_ values: [Double]) -> String {
        guard let low = values.min(), let high = values.max() else { return "none" }
        return "\(ConsolePage.number(low)) to \(ConsolePage.number(high))"
    }
}
