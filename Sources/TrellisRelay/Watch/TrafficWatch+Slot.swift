import Foundation
import TrellisMQTTTypes

extension TrafficWatch {
    /// One message as `trace` reads it back: the message received (without its v5 properties or
    /// delivery), the publishes kept, and how many were left out.
    struct Entry {
        var message: MQTTMessage
        var publishes: [MQTTMessage]
        /// How many of its publishes were left out, and how many were presses fanned out (when any were).
        var omitted: Int
        var presses: Int?
        var at: Date
        var seq: Int
    }

    /// One place in the ring: the message and its kept publishes by reference (their storage is
    /// shared with the relay's, not copied), in a struct of plain fields, so that putting a message in
    /// and letting one go are each a few reference counts, done by code made for this type. An empty
    /// slot refers to nothing.
    struct Slot {
        var topic = ""
        var payload: [UInt8] = []
        var qos = QoS.atMostOnce
        var retain = false
        var publishes: [MQTTMessage] = []
        /// What the message counts against ``TrafficWatch/byteLimit``.
        var size = 0
        var omitted = 0
        var presses: Int?
        var at = Date(timeIntervalSinceReferenceDate: 0)
        var seq = 0

        var entry: Entry {
            Entry(
                message: MQTTMessage(topic: topic, payload: payload, qos: qos, retain: retain), publishes: publishes,
                omitted: omitted, presses: presses, at: at, seq: seq)
        }
    }
}
