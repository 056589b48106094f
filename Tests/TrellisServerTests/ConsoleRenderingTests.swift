import Foundation
import Testing
import TrellisMQTTTypes
import TrellisCore
import TrellisStore
@testable import TrellisServer

/// The console's pages as text: every value from the store escaped wherever it lands (element
/// text, attributes, links, the chart's title), payloads cut, dates of any year written, and the
/// frame a screen reader finds its way by.
@Suite("Console: the pages' HTML")
struct ConsoleRenderingTests {
    static let hostile = #"</script><script>alert("x")</script><img src=x onerror='alert(1)'>&amp;"#

    @Test("escape turns every character that could open markup or end an attribute into a reference")
    func escaping() {
        #expect(
            HTML.escape(#"<a href="x" title='y'>&</a>"#)
                == "&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;")
        #expect(HTML.escape("a\u{0}b\u{7}c\nd") == "a\u{FFFD}b\u{FFFD}c\nd")
        #expect(HTML.escape("Tür 🌱") == "Tür 🌱")
        let name = "x"
        let html: HTML = "<p title=\"\(Self.hostile)\">\(name)</p>"
        #expect(!html.text.contains("<script>") && !html.text.contains("'alert"))
    }

    @Test("a link's path segment keeps slashes, dots, queries and fragments inside the segment")
    func pathSegments() {
        #expect(HTML.pathSegment("../a b/?#x") == "%2E%2E%2Fa%20b%2F%3F%23x")
        #expect(HTML.pathSegment("Tür") == "T%C3%BCr")
        #expect(HTML.pathSegment("Tür").removingPercentEncoding == "Tür")
    }

    @Test("a hostile plant name is text everywhere on /plants and on its history page, chart included")
    func hostilePlantName() {
        let plant = ConsolePlant(
            name: Self.hostile,
            sensors: [
                PlantSensorRecord(plant: Self.hostile, sensor: "0x36\"><b>", moisture: 7, temperature: 71.5, at: Date())
            ],
            species: "Rosa <i>", alerts: "dry on 0x36 & <hot>")
        let list = ConsolePage.plants([plant]).text
        let history = ConsolePage.plantHistory(
            name: Self.hostile, span: "7d",
            points: [
                HistoryPoint(
                    at: Date(timeIntervalSince1970: 1_800_000_000), count: 3, moistureMin: 2, moistureMean: 4.5,
                    moistureMax: 7, temperatureMin: 60, temperatureMean: 65, temperatureMax: 70)
            ], from: Date(timeIntervalSince1970: 1_799_900_000), to: Date(timeIntervalSince1970: 1_800_100_000)
        ).text
        for page in [list, history] {
            #expect(!page.contains("<script"), "\(page)")
            #expect(!page.contains("<img"), "\(page)")
            #expect(!page.contains("<b>") && !page.contains("<i>") && !page.contains("<hot>"))
            #expect(page.contains("&lt;/script&gt;&lt;script&gt;alert(&quot;x&quot;)"))
        }
        #expect(list.contains("href=\"/plants/%3C%2Fscript%3E"))
        #expect(history.contains("<title id=\"chart-title\">Readings of &lt;/script&gt;"))
        #expect(history.contains("<polyline class=\"moisture\""))
    }

    @Test("a huge payload is cut to its first bytes and the rest counted; invalid UTF-8 is replaced")
    func hugePayload() {
        let payload = Array(repeating: UInt8(ascii: "<"), count: 1_000_000) + [0xFF]
        let letter = StoredDeadLetter(
            id: 1, reason: "bad\"reason", topic: "t/<x>", payload: payload, receivedAt: Date())
        let page = ConsolePage.deadLetters([letter], limit: 100).text
        #expect(page.utf8.count < 20_000)
        #expect(page.contains(String(repeating: "&lt;", count: ConsolePage.payloadLimit)))
        #expect(page.contains("and \(payload.count - ConsolePage.payloadLimit) more bytes"))
        #expect(page.contains("bad&quot;reason") && page.contains("t/&lt;x&gt;"))
        #expect(ConsolePage.cut([0x61, 0xFF, 0x62]).text == "a\u{FFFD}b")
    }

    @Test("times of any year are written whole, 9999 included, on buttons, devices' logs and dead letters")
    func farDates() {
        let far = Date(timeIntervalSince1970: 253_402_300_799) // 9999-12-31T23:59:59Z
        let buttons = ConsolePage.buttons([ButtonState(id: "door", total: 2, history: [far])]).text
        #expect(buttons.contains("9999-12-31T23:59:59.000Z"), "\(buttons)")
        let device = ConsolePage.device(
            DeviceRecord(id: "d<1>", powerstate: .online),
            log: [DeviceLogEntry(timestamp: far, type: "Device", message: "</pre><script>x</script>")]
        ).text
        #expect(device.contains("9999-12-31T23:59:59.000Z") && !device.contains("<script>"))
        #expect(device.contains("Device d&lt;1&gt;"))
        let chart = HistoryChart.svg(plant: "p", points: [], from: far.addingTimeInterval(-86_400), to: far).text
        #expect(chart.contains("9999-12-31") && chart.contains("No readings"))
    }

    @Test("each page has one h1, a main landmark, a labelled navigation with the current page, no script")
    func frame() {
        let pages: [(ConsolePage.Section, HTML)] = [
            (.buttons, ConsolePage.buttons([])), (.devices, ConsolePage.devices([])),
            (.deadLetters, ConsolePage.deadLetters([], limit: 100)),
            (.live, ConsolePage.live(events: [], query: [:], kept: 0, refusal: nil)),
            (.plants, ConsolePage.plants([]))
        ]
        for (section, page) in pages {
            let text = page.text
            #expect(text.components(separatedBy: "<h1>").count == 2)
            #expect(text.contains("<main id=\"main\">") && text.contains("<nav aria-label=\"Console pages\">"))
            #expect(text.contains("<a href=\"\(section.path)\" aria-current=\"page\">"))
            #expect(!text.contains("<script") && !text.contains("style="))
            #expect(text.range(of: #"\son[a-z]+="#, options: .regularExpression) == nil)
            #expect(text.contains("lang=\"en\"") && text.contains("name=\"viewport\""))
        }
        let table = ConsolePage.table(caption: "c", columns: ["A", "B"], rows: [["1", "2"]], empty: "none").text
        #expect(table.contains("<th scope=\"col\">A</th>") && table.contains("<th scope=\"row\">1</th><td>2</td>"))
        // The live page: a decoded message, its sender's markup escaped, refreshed without a script.
        let event = WatchDescriber(prefixes: TopicPrefixes(), deadLetterTopic: "trellis/deadletter", relay: "r")
            .describe(
                MQTTMessage(
                    topic: "rpi/torpi",
                    payload: Array("ID:1;sender:<script>x</script>;receiver:h;payload:;operation:REQ_numPlants".utf8),
                    qos: .atMostOnce), publishes: [], at: Date(), seq: 1)
        let live = ConsolePage.live(events: [event], query: ["client": "\"><b>"], kept: 1, refusal: nil).text
        #expect(live.contains("REQ_numPlants #1 from &lt;script&gt;x&lt;/script&gt;") && !live.contains("<script"))
        #expect(live.contains(#"value="&quot;&gt;&lt;b&gt;""#))
        #expect(live.contains(#"<meta http-equiv="refresh" content="5">"#))
    }
}
