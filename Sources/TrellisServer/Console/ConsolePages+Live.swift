import Foundation
import TrellisCore

/// `/live`: the messages the relay handled most recently, decoded as `trellis watch` shows them,
/// newest first, with the same filters (a form of GET parameters), read from the traffic the relay
/// keeps (``TrellisRelay/TrafficWatch``) and refreshed by the browser every ``liveRefresh`` seconds
/// (a `<meta>` refresh: the console runs no script).
extension ConsolePage {
    /// Seconds between the live page's refreshes.
    static let liveRefresh = 5
    /// The most events the live page shows.
    static let liveLimit = 200
    /// The filter's fields, in the form's order: each a kind of `trellis watch`'s terms.
    static let liveFields = ["client", "service", "topic", "verdict"]

    /// The filter words of a request's query (`?service=plant&verdict=refused`), as `trellis watch` takes them.
    static func liveWords(_ query: [String: String]) -> [String] {
        liveFields.compactMap { field in query[field].flatMap { $0.isEmpty ? nil : "\(field):\($0)" } }
    }

    /// The page: the filter form, then the events (newest first) or why the filter was refused.
    static func live(events: [WatchEvent], query: [String: String], kept: Int, refusal: String?) -> HTML {
        let inputs = liveFields.map { field -> HTML in
            let value = query[field] ?? ""
            let hint: String =
                switch field {
                case "topic": "an MQTT filter, such as rpi/#"
                case "verdict": WatchFilter.verdicts.joined(separator: ", ")
                default: "any"
                }
            return """
                <p><label for="f-\(field)">\(field.capitalized)</label>
                <input id="f-\(field)" name="\(field)" value="\(value)" placeholder="\(hint)"></p>
                """
        }
        let form: HTML = """
            <form method="get" action="/live" class="filter" aria-label="Filter the messages">
            \(HTML(joining: inputs))
            <p><button type="submit">Filter</button> \(link("/live", "Clear"))</p>
            </form>
            """
        if let refusal {
            return document(
                title: "Live", section: .live, main: "\(form)<p class=\"error\" role=\"alert\">\(refusal)</p>")
        }
        let rows = events.reversed().map { event -> [HTML] in
            let who = event.client.map { " \($0)" } ?? ""
            let verdict = event.reason.map { "\(event.verdict.rawValue) \($0)" } ?? event.verdict.rawValue
            let replies = event.replies.map { reply -> HTML in
                "<li><code>\(reply.topic)</code> \(reply.summary)</li>"
            }
            return [
                "<time datetime=\"\(event.at)\">\(event.at)</time>", "\(event.service)\(who)",
                "<code>\(event.topic)</code><br>\(event.summary)",
                "<span class=\"verdict \(event.verdict.rawValue)\">\(verdict)</span>",
                replies.isEmpty ? "—" : "<ul class=\"replies\">\(HTML(joining: replies))</ul>"
            ]
        }
        return document(
            title: "Live", section: .live,
            main: """
                \(form)
                <p class="note">\(kept > liveLimit ? "The newest \(liveLimit) of the \(kept)" : "The \(kept)") messages this relay keeps in memory, newest first; \
                the page refreshes every \(liveRefresh) seconds. <code>trellis watch</code> shows the same in a terminal.</p>
                \(table(
                    caption: "Messages handled", columns: ["Received", "Service and sender", "Message", "Verdict", "Replies"],
                    rows: rows, empty: "No message matches."))
                """,
            refresh: liveRefresh)
    }
}
