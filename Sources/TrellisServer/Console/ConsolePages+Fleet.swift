import Foundation
import TrellisCore
import TrellisStore

extension ConsolePage {
    /// Bytes of a dead letter's payload shown; the rest is counted, not shown.
    static let payloadLimit = 512
    /// Log entries `/devices/ID` shows, newest last.
    static let logTail = 50

    /// `/buttons`: each button with its total and its latest presses, newest first.
    static func buttons(_ buttons: [ButtonState]) -> HTML {
        let rows = buttons.map { button -> [HTML] in
            let presses = button.history.suffix(5).reversed().map(time)
            return ["\(button.id)", "\(button.total)", HTML(joining: presses, separator: ", ")]
        }
        return document(
            title: "Buttons", section: .buttons,
            main: table(
                caption: "Buttons, their presses and the latest five", columns: ["Button", "Presses", "Latest presses"],
                rows: rows, empty: "No button was pressed yet."))
    }

    /// `/devices`: each device with its status.
    static func devices(_ devices: [DeviceRecord]) -> HTML {
        let rows = devices.map { device -> [HTML] in
            [
                link("/devices/" + HTML.pathSegment(device.id), device.id), "\(device.name ?? "")",
                state(device.powerstate == .online, up: "online", down: "offline"),
                "\(device.rssi.map(String.init) ?? "")", "\(device.modelID ?? "")", "\(device.agentStatus ?? "")"
            ]
        }
        return document(
            title: "Devices", section: .devices,
            main: table(
                caption: "Devices and their status", columns: ["Device", "Name", "Status", "RSSI", "Model", "Agent"],
                rows: rows, empty: "No device is registered."))
    }

    /// `/devices/ID`: the device's facts and the tail of its log.
    static func device(_ device: DeviceRecord, log: [DeviceLogEntry]) -> HTML {
        let facts: [(String, HTML)] = [
            ("Status", state(device.powerstate == .online, up: "online", down: "offline")),
            ("Name", "\(device.name ?? "none")"), ("Model", "\(device.modelID ?? "none")"),
            ("RSSI", "\(device.rssi.map(String.init) ?? "unknown")"),
            ("Agent", "\(device.agentID ?? "none") \(device.agentStatus ?? "")")
        ]
        let list = facts.map { name, value -> HTML in "<dt>\(name)</dt><dd>\(value)</dd>" }
        let rows = log.map { entry -> [HTML] in
            [time(entry.timestamp), "\(entry.type)", "<pre class=\"payload\">\(cut(Array(entry.message.utf8)))</pre>"]
        }
        return document(
            title: "Device \(device.id)", section: .devices,
            main: """
                <dl class="facts">\(list)</dl>
                <h2>Log</h2>
                \(table(caption: "The last \(logTail) log entries, oldest first", columns: ["Time", "Type", "Message"], rows: rows, empty: "The log is empty."))
                <p>\(link("/devices", "All devices"))</p>
                """)
    }

    /// `/dead-letters`: the newest dead letters with their reason, topic, time and payload (cut).
    static func deadLetters(_ letters: [StoredDeadLetter], limit: Int) -> HTML {
        let rows = letters.map { letter -> [HTML] in
            [
                time(letter.receivedAt), "<span class=\"reason\">\(letter.reason)</span>", "\(letter.topic)",
                "<pre class=\"payload\">\(cut(letter.payload))</pre>"
            ]
        }
        return document(
            title: "Dead letters", section: .deadLetters,
            main: table(
                caption: "The newest \(limit) dead letters, newest first",
                columns: ["Received", "Reason", "Topic", "Payload"],
                rows: rows, empty: "No dead letters."))
    }

    /// A page saying what was not found, for a 404.
    static func notFound(_ what: String, section: Section?) -> HTML {
        document(
            title: "Not found", section: section, main: "<p>\(what)</p><p>\(link("/", "Back to the overview"))</p>")
    }

    /// `payload`'s first ``payloadLimit`` bytes as text (invalid UTF-8 replaced), with how many
    /// bytes were left out; escaped like every other value.
    static func cut(_ payload: [UInt8]) -> HTML {
        guard !payload.isEmpty else { return "<span class=\"empty\">(empty)</span>" }
        let shown = String(decoding: payload.prefix(payloadLimit), as: UTF8.self)
        let rest = payload.count - min(payload.count, payloadLimit)
        return rest > 0 ? "\(shown)<span class=\"note\"> … and \(rest) more bytes</span>" : "\(shown)"
    }
}
