import Foundation
import TrellisCore
import TrellisMQTT

/// `trellis trace`'s questions to a relay, over the broker: `trellis/request/trace` for the events
/// that name a message, and `trellis/request/deadletters/list` for the dead letter whose message
/// is traced. Each request carries a transaction of its own; the answer with it is taken from
/// `trellis/response/…`, within ``timeout``.
package struct TraceQuery: Sendable {
    package static let timeout: Duration = .seconds(10)

    let client: MQTTClient

    package init(client: MQTTClient) { self.client = client }

    /// What the relay answered a trace with.
    package struct Answer: Decodable, Sendable {
        package var events: [WatchEvent]
        package var relay: String
        package var kept: Int
    }

    /// The events that `id` names, or those of the message on `topic` received in the second of `at`.
    package func trace(id: String?, topic: String?, at: String?) async throws -> Answer {
        var request: [String: JSONValue] = [:]
        if let id { request["id"] = .string(id) }
        if let topic { request["topic"] = .string(topic) }
        if let at { request["at"] = .string(at) }
        let data = try await ask("trace", action: nil, request)
        return try JSONDecoder().decode(Answer.self, from: Data(JSONEnvelope.encode(data)))
    }

    /// The topic and time of the dead letter numbered `id`, nil when there is none.
    package func deadLetter(_ id: Int64) async throws -> (topic: String, at: String)? {
        let data = try await ask("deadletters", action: "list", ["cursor": .string("\(id + 1)"), "limit": .integer(1)])
        guard case let .object(page) = data, case let .array(letters)? = page["dead_letters"],
            case let .object(letter)? = letters.first, case let .integer(found)? = letter["id"], found == id,
            case let .string(topic)? = letter["topic"], case let .string(at)? = letter["received_at"]
        else { return nil }
        return (topic, at)
    }

    /// Sends `members` to `service`/`action` and returns the answer's `data`; a refusal is an error
    /// carrying its sentence.
    func ask(_ service: String, action: String?, _ members: [String: JSONValue]) async throws -> JSONValue {
        let path = action.map { "\(service)/\($0)" } ?? service
        let transaction = UUID().uuidString
        var request = members
        request["transaction"] = .string(transaction)
        let replies = "trellis/response/\(path)"
        try await client.subscribe(replies, qos: .atLeastOnce)
        try client.publish(
            MQTTMessage(
                topic: "trellis/request/\(path)", payload: JSONEnvelope.encode(JSONValue.object(request)),
                qos: .atLeastOnce))
        let answer = try await withThrowingTaskGroup(of: JSONValue?.self) { group in
            group.addTask {
                for await message in client.messages where message.topic == replies {
                    guard case let .object(reply)? = JSONValue.parse(String(decoding: message.payload, as: UTF8.self)),
                        reply["transaction"] == .string(transaction)
                    else { continue }
                    return .object(reply)
                }
                return nil
            }
            group.addTask {
                try await Task.sleep(for: Self.timeout)
                return nil
            }
            let first = try await group.next() ?? nil
            group.cancelAll()
            return first
        }
        guard case let .object(reply)? = answer else {
            throw fail(
                "no answer on \(replies) within \(Self.timeout): is Trellis running on this broker, and is this account an operator?"
            )
        }
        guard case let .string(status)? = reply["status"], status == "ok", let data = reply["data"] else {
            let sentence: String = if case let .string(error)? = reply["error"] { error } else { "refused" }
            throw fail("\(path) was refused: \(sentence)")
        }
        return data
    }
}
