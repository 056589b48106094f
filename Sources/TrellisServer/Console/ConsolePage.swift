import Foundation
import TrellisCore

/// The frame every console page shares: the document head (one stylesheet, no script), a skip
/// link, the navigation as a landmark with the current page marked, one `<main>` with one `<h1>`,
/// and a footer. Pages are rendered whole on the server from what the store answers; the browser
/// runs nothing.
enum ConsolePage {
    /// The pages of the navigation, in its order.
    enum Section: String, CaseIterable, Sendable {
        case overview, plants, buttons, devices, deadLetters, live

        var path: String {
            switch self {
            case .overview: "/"
            case .plants: "/plants"
            case .buttons: "/buttons"
            case .devices: "/devices"
            case .deadLetters: "/dead-letters"
            case .live: "/live"
            }
        }

        var title: String {
            switch self {
            case .overview: "Overview"
            case .plants: "Plants"
            case .buttons: "Buttons"
            case .devices: "Devices"
            case .deadLetters: "Dead letters"
            case .live: "Live"
            }
        }
    }

    /// The stylesheet's path; its text is ``ConsoleStylesheet/text``.
    static let stylesheetPath = "/console.css"

    /// The tab's icon (a leaf-green disc), served so the browser asks for no other.
    static let favicon =
        ##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><circle cx="8" cy="8" r="7" fill="#0a5c36"/></svg>"##

    /// A whole document titled `title`, `section` marked current in the navigation, `main` as its content.
    /// The page `main` is the content of; `refresh`: seconds after which the browser loads it again.
    static func document(title: String, section: Section?, main: HTML, refresh: Int? = nil) -> HTML {
        let links = Section.allCases.map { item -> HTML in
            let current: HTML = item == section ? #" aria-current="page""# : ""
            return "<li><a href=\"\(item.path)\"\(current)>\(item.title)</a></li>"
        }
        return """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            \(refresh.map { "<meta http-equiv=\"refresh\" content=\"\($0)\">" as HTML } ?? "")
            <title>\(title) · Trellis console</title>
            <link rel="stylesheet" href="\(stylesheetPath)">
            <link rel="icon" href="/favicon.svg" type="image/svg+xml">
            </head>
            <body>
            <a class="skip" href="#main">Skip to the content</a>
            <header><p class="brand">Trellis console</p>
            <nav aria-label="Console pages"><ul>\(links)</ul></nav>
            </header>
            <main id="main">
            <h1>\(title)</h1>
            \(main)
            </main>
            <footer><p>Read-only. Rendered by Trellis at \(time(Date()))</p></footer>
            </body>
            </html>

            """
    }

    /// A `<time>` element for `date`, in UTC to the second (ISO 8601), whatever the year.
    static func time(_ date: Date) -> HTML {
        let text = ISO8601Time.format(date)
        return "<time datetime=\"\(text)\">\(text)</time>"
    }

    /// A number with at most one decimal.
    static func number(_ value: Double) -> String {
        guard value.isFinite else { return "—" }
        let rounded = (value * 10).rounded() / 10
        return rounded == rounded.rounded() && abs(rounded) < 1e15 ? String(Int64(rounded)) : String(rounded)
    }

    /// A table with a caption, a header row of `columns` (`scope="col"`) and `rows`; the first cell
    /// of each row is its header (`scope="row"`). `empty` is said instead of an empty table.
    static func table(caption: String, columns: [String], rows: [[HTML]], empty: String) -> HTML {
        guard !rows.isEmpty else { return "<p class=\"empty\">\(empty)</p>" }
        let head = columns.map { column -> HTML in "<th scope=\"col\">\(column)</th>" }
        let body = rows.map { cells -> HTML in
            let first: HTML = cells.first.map { "<th scope=\"row\">\($0)</th>" } ?? ""
            let rest = cells.dropFirst().map { cell -> HTML in "<td>\(cell)</td>" }
            return "<tr>\(first)\(rest)</tr>\n"
        }
        return """
            <div class="scroll" role="region" aria-label="\(caption)" tabindex="0"><table>
            <caption>\(caption)</caption>
            <thead><tr>\(head)</tr></thead>
            <tbody>
            \(body)</tbody>
            </table></div>
            """
    }

    /// A link to `path` (written as it is: built from fixed text and ``HTML/pathSegment(_:)``) reading `text`.
    static func link(_ path: String, _ text: String) -> HTML {
        "<a href=\"\(path)\">\(text)</a>"
    }
}
