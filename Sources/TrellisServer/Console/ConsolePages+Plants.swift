import Foundation
import TrellisCore
import TrellisStore

/// What the overview shows: the readiness answer (the facts `/readyz` gives) and the few figures
/// that matter, read when the page is asked for.
struct ConsoleOverview: Sendable {
    var readiness: Probes.Answer
    /// Messages the relay handled since it started.
    var handled: Int
    /// The store's counts; nil when it did not answer within a second.
    var counts: StoreCounts?
    var writes: StoreWriteStatus
}

/// One plant on `/plants`: its sensors' latest readings and, when it is linked to a species, its
/// care alerts as the browse facts give them.
struct ConsolePlant: Sendable {
    var name: String
    var sensors: [PlantSensorRecord]
    var species: String?
    /// The active care alerts (`dry on 0x36, …`, or `none`); nil when the plant is not linked.
    var alerts: String?
}

extension ConsolePage {
    /// `/`: health, the figures, links to the pages.
    static func overview(_ overview: ConsoleOverview) -> HTML {
        let ready = overview.readiness
        let checks = ready.checks.sorted { $0.key < $1.key }.map { name, check -> [HTML] in
            [HTML("\(name)"), state(check.ok), HTML("\(check.error ?? "")")]
        }
        let links = ready.bridges.map { link -> [HTML] in
            [
                "\(link.name) (\(link.direction))",
                state(link.connected || link.standby, up: link.standby ? "standby" : "connected", down: "disconnected"),
                ""
            ]
        }
        let counts = overview.counts
        let figures: [(String, String)] = [
            ("Messages handled since start", "\(overview.handled)"),
            ("Dead letters kept", counts.map { "\($0.deadLetters)" } ?? "unknown (the store did not answer)"),
            ("Store", overview.writes.writable ? "writable" : "not writable: \(overview.writes.error ?? "unknown")"),
            ("Failed commits", "\(overview.writes.failedCommits)"),
            ("Changes waiting to be written", "\(overview.writes.unwrittenChanges)"),
            ("Plants", counts.map { "\($0.plants)" } ?? "unknown"),
            ("Buttons", counts.map { "\($0.buttons)" } ?? "unknown"),
            ("Devices", counts.map { "\($0.devices)" } ?? "unknown")
        ]
        let facts = figures.map { name, value -> HTML in "<dt>\(name)</dt><dd>\(value)</dd>" }
        let pages = Section.allCases.dropFirst().map { section -> HTML in
            "<li>\(link(section.path, section.title))</li>"
        }
        return document(
            title: "Overview", section: .overview,
            main: """
                <section aria-labelledby="health"><h2 id="health">Health: <span class="\(ready.healthy ? "ok" : "bad")" \
                data-status="\(ready.status)">\(ready.status)</span></h2>
                \(table(caption: "Readiness checks (as /readyz answers)", columns: ["Check", "State", "Problem"], rows: checks + links, empty: "No checks."))
                </section>
                <section aria-labelledby="figures"><h2 id="figures">Figures</h2>
                <dl class="facts">\(facts)</dl></section>
                <section aria-labelledby="pages"><h2 id="pages">Pages</h2><ul class="links">\(pages)</ul></section>
                """)
    }

    /// `ok` or the failure, in words and colour.
    static func state(_ ok: Bool, up: String = "ok", down: String = "failing") -> HTML {
        ok ? "<span class=\"ok\">\(up)</span>" : "<span class=\"bad\">\(down)</span>"
    }

    /// `/plants`: each plant with its sensors' latest readings and its care alerts.
    static func plants(_ plants: [ConsolePlant]) -> HTML {
        let sections = plants.map { plant -> HTML in
            let rows = plant.sensors.map { record -> [HTML] in
                [
                    "\(record.sensor)", "\(record.moisture.map(String.init) ?? "no reading")",
                    "\(record.temperature.map { number($0) + " °F" } ?? "")", record.at.map(time) ?? ""
                ]
            }
            let path = "/plants/" + HTML.pathSegment(plant.name)
            let species: HTML = plant.species.map { "<dt>Species</dt><dd>\($0)</dd>" } ?? ""
            return """
                <section class="plant"><h2>\(link(path, plant.name))</h2>
                <dl class="facts">\(species)<dt>Care alerts</dt><dd>\(plant.alerts ?? "not linked to a species")</dd></dl>
                \(table(caption: "Latest readings of \(plant.name)", columns: ["Sensor", "Moisture", "Temperature", "Read at"], rows: rows, empty: "No sensors."))
                </section>
                """
        }
        return document(
            title: "Plants", section: .plants,
            main: sections.isEmpty ? "<p class=\"empty\">No plants yet.</p>" : HTML(joining: sections, separator: "\n"))
    }

    /// The spans `/plants/NAME?since=` takes, in seconds.
    static let spans: [(name: String, seconds: Double)] = [("24h", 86_400), ("7d", 7 * 86_400), ("30d", 30 * 86_400)]

    /// `/plants/NAME`: the chart of its history over `span` (one of ``spans``), and its points as a table.
    static func plantHistory(name: String, span: String, points: [HistoryPoint], from: Date, to: Date) -> HTML {
        let base = "/plants/" + HTML.pathSegment(name)
        let choices = spans.map { choice -> HTML in
            let current: HTML = choice.name == span ? #" aria-current="page""# : ""
            return "<li><a href=\"\(base)?since=\(choice.name)\"\(current)>Last \(choice.name)</a></li>"
        }
        let rows = points.reversed().map { point -> [HTML] in
            [
                time(point.at), "\(point.count)",
                "\(number(point.moistureMin)) / \(number(point.moistureMean)) / \(number(Double(point.moistureMax)))",
                "\(number(point.temperatureMin)) / \(number(point.temperatureMean)) / \(number(point.temperatureMax))"
            ]
        }
        return document(
            title: "Plant \(name)", section: .plants,
            main: """
                <nav aria-label="Span"><ul class="spans">\(choices)</ul></nav>
                <ul class="legend"><li><span class="swatch-moisture">—</span> moisture (1–10, left)</li>\
                <li><span class="swatch-temperature">- -</span> temperature (°F, right)</li></ul>
                \(HistoryChart.svg(plant: name, points: points, from: from, to: to))
                \(table(caption: "Readings of \(name), newest first (min / mean / max)", columns: ["From", "Readings", "Moisture", "Temperature"], rows: rows, empty: "No readings in this span."))
                <p>\(link("/plants", "All plants"))</p>
                """)
    }

    /// A number with one decimal at most.
    static func number(_ value: Int) -> String { String(value) }
}
