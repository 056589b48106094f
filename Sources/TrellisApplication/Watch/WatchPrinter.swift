import Foundation
import TrellisCore
import TrellisMQTT

/// What `trellis watch` makes of each message it receives, without the I/O: an event that passes
/// the filter becomes a line (or, with `--json`, the event's JSON as received), a relay's answer
/// to the watch request a note the first time, a gap in a relay's numbers a note of how many
/// events were left out (the relay's rate bound), anything else nothing.
package struct WatchPrinter: Sendable {
    /// What to write, and where.
    package enum Output: Equatable, Sendable {
        /// To standard output.
        case line(String)
        /// To standard error: about the watch, not the traffic.
        case note(String)
    }

    package let eventsTopic: String
    package let repliesPrefix: String
    package let filter: WatchFilter
    package let json: Bool
    package let colour: Bool
    /// The relays heard answering, and the last event number seen of each.
    package private(set) var relays: Set<String> = []
    private var lastSeq: [String: Int] = [:]

    package init(trellisPrefix: String, filter: WatchFilter, json: Bool, colour: Bool) {
        eventsTopic = "\(trellisPrefix)/watch/events"
        repliesPrefix = "\(trellisPrefix)/watch/relays/"
        (self.filter, self.json, self.colour) = (filter, json, colour)
    }

    /// The topics to subscribe to.
    package var subscriptions: [String] { [eventsTopic, repliesPrefix + "+"] }

    /// What `message` calls for.
    package mutating func take(_ message: MQTTMessage) -> [Output] {
        if message.topic.hasPrefix(repliesPrefix) {
            let relay = String(message.topic.dropFirst(repliesPrefix.count))
            guard relays.insert(relay).inserted else { return [] }
            return [.note("watching relay \(relay)")]
        }
        guard message.topic == eventsTopic else { return [] }
        guard let event = try? JSONDecoder().decode(WatchEvent.self, from: Data(message.payload)) else {
            return [.note("an event that could not be read was left out (\(message.payload.count) bytes)")]
        }
        var out: [Output] = []
        if let last = lastSeq[event.relay], event.seq > last + 1 {
            out.append(.note("\(event.seq - last - 1) events of \(event.relay) left out (its rate bound)"))
        }
        lastSeq[event.relay] = event.seq
        guard filter.admits(event) else { return out }
        out.append(
            .line(json ? String(decoding: message.payload, as: UTF8.self) : WatchLine.render(event, colour: colour)))
        return out
    }

    /// The watch request: the stream on for `seconds`.
    package static func request(seconds: Int) -> [UInt8] { Array(#"{"seconds":\#(seconds)}"#.utf8) }
}
