import Foundation

/// One message as `trellis watch` and `trellis trace` show it: what came in, decoded by its
/// protocol, what Trellis made of it (the verdict) and what it sent in answer, linked to it.
///
/// Made by ``WatchDescriber`` from the message and the publishes its handling called for, so it
/// says only what the handling did; published as one JSON object per message on the watch topic
/// (docs/watch.md) and answered by `trellis/request/trace`. The field names are the JSON's.
public struct WatchEvent: Sendable, Codable, Equatable {
    /// What Trellis made of a message.
    public enum Verdict: String, Sendable, Codable, CaseIterable {
        /// Answered with a success (`RES_…`, `"status":"ok"`, a registration's success).
        case answered
        /// Answered with a refusal: an `ERR_` tag or a JSON error code, named in ``WatchEvent/reason``.
        case error
        /// Refused without an answer and kept as a dead letter, its reason in ``WatchEvent/reason``.
        case deadLettered = "dead_letter"
        /// A sender over the spam limit, muted (a `spam_muted` dead letter).
        case muted
        /// Taken with nothing to answer: a reading stored, a press counted, a status noted.
        case handled
    }

    /// One message Trellis published while handling this one.
    public struct Reply: Sendable, Codable, Equatable {
        public var topic: String
        /// The reply decoded as the request was (an operation and its payload, a JSON status).
        public var summary: String

        public init(topic: String, summary: String) { (self.topic, self.summary) = (topic, summary) }
    }

    /// This relay's number for the event, counting from its start: a gap in a watcher's stream is
    /// events it missed.
    public var seq: Int
    /// When the message was received (ISO 8601 UTC with milliseconds).
    public var at: String
    /// The relay's MQTT client id (several relays may share a group).
    public var relay: String
    public var topic: String
    /// The protocol or service: `plant`, `sensor`, `buttons`, `devices`, a JSON service's name
    /// (`fleet`, `catalog`, `browse`, …) or `unknown`.
    public var service: String
    /// Who sent it, as far as the topic or the message names them: a per-client topic's client, a
    /// plant-tracker sender, a sensor's address, a device's id; nil on a shared topic that does not.
    public var client: String?
    /// The request's own id where its protocol has one: a plant-tracker `ID`, a JSON `transaction`.
    public var request: String?
    /// The message decoded in one line (an operation and its decoded payload, a JSON action, a press).
    public var summary: String
    /// Its decoded fields, by name (a plant-tracker message's five, a JSON request's action).
    public var fields: [String: String]
    public var verdict: Verdict
    /// The `ERR_` tag, JSON error code or dead-letter reason of a refusal.
    public var reason: String?
    /// What Trellis published in answer, in the order it did, dead letters left out.
    public var replies: [Reply]
    /// For a button press, how many clients it was fanned out to.
    public var fanOut: Int?
    /// The payload as text (bytes that are not UTF-8 replaced), cut to ``WatchDescriber/payloadLimit`` bytes.
    public var payload: String
    /// The payload's size in bytes, when it was cut.
    public var size: Int?
    public var qos: Int
    public var retain: Bool

    enum CodingKeys: String, CodingKey {
        case seq, at, relay, topic, service, client, request, summary, fields, verdict, reason, replies
        case fanOut = "fan_out"
        case payload, size, qos, retain
    }

    /// Whether `text` names this event for `trellis trace`: its request id, its client, its topic,
    /// or its sequence number.
    public func isNamed(by text: String) -> Bool {
        request == text || client == text || topic == text || "\(seq)" == text
    }
}
