import Foundation
import Testing
import TrellisCore
import TrellisMQTTTypes
import TrellisTestSupport

/// Who sends the JSON services' requests in a test and reads their replies: an operator's client
/// through a real broker (``FleetConsole``), or the relay's engine driven directly over a store
/// of any kind (``EngineConsole``). The service tests read the same either way.
protocol JSONConsole: Sendable {
    /// `service`/`action` on the shared topics, or on `client`'s own; the reply's text.
    func reply(to service: String, _ action: String, _ json: String, client: String?) async throws -> String
}

/// The JSON services on the engine, no broker: each request handled as the relay handles it,
/// its reply picked from what the engine publishes.
struct EngineConsole: JSONConsole {
    let harness: EngineHarness

    func reply(to service: String, _ action: String, _ json: String, client: String?) async throws -> String {
        let topics = JSONTopics(prefix: "trellis")
        let published = await harness.send(json, on: topics.request(service: service, action: action, client: client))
        let replyTopic = topics.response(service: service, action: action, client: client)
        let reply = try #require(published.last { $0.topic == replyTopic }, "no reply on \(replyTopic): \(published)")
        return String(decoding: reply.payload, as: UTF8.self)
    }
}

extension JSONConsole {
    /// `service`/`action` on the shared topics, or on `client`'s own; the reply's text.
    @discardableResult
    func request(_ service: String, _ action: String, _ json: String = "", client: String? = nil) async throws -> String
    {
        try await reply(to: service, action, json, client: client)
    }

    /// The `data` of an ok reply, as JSON text with sorted keys.
    func data(_ service: String, _ action: String, _ json: String = "") async throws -> String {
        let reply = try await request(service, action, json)
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(reply.utf8)) as? [String: Any], "\(reply)")
        #expect(object["status"] as? String == "ok", "\(reply)")
        let data = try #require(object["data"])
        return String(
            decoding: try JSONSerialization.data(
                withJSONObject: data, options: [.sortedKeys, .fragmentsAllowed, .withoutEscapingSlashes]), as: UTF8.self
        )
    }

    /// The `code` of an error reply.
    func errorCode(_ service: String, _ action: String, _ json: String, client: String? = nil) async throws -> String {
        let reply = try await request(service, action, json, client: client)
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(reply.utf8)) as? [String: Any], "\(reply)")
        #expect(object["status"] as? String == "error", "\(reply)")
        #expect((object["error"] as? String)?.isEmpty == false)
        return object["code"] as? String ?? ""
    }
}
