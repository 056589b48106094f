import Foundation
import Testing
import TrellisCore
import TrellisMQTT
import TrellisTestSupport

/// What the button tests share: topics, fixed press times, and reading dead-letter records.
enum Buttons {
    /// The ISO 8601 text Trellis writes for `second` seconds after 2026-11-22T10:40:00Z.
    static func time(_ second: Int) -> String {
        ISO8601Time.format(Date(timeIntervalSince1970: TimeInterval(1_795_344_000 + second)))
    }

    /// The JSON array of the times of `seconds`, as in a history.
    static func history(_ seconds: some Sequence<Int>) -> String {
        "[" + seconds.map { "\"\(time($0))\"" }.joined(separator: ",") + "]"
    }

    /// The exact `register-response` with a button.
    static func registered(_ button: String, count: Int, history seconds: some Sequence<Int>) -> String {
        #"{"button":{"count":\#(count),"history":\#(history(seconds)),"id":"\#(button)"},"status":"success"}"#
    }

    /// The exact retained state of a button.
    static func state(_ button: String, total: Int, history seconds: some Sequence<Int>) -> String {
        #"{"history":\#(history(seconds)),"id":"\#(button)","total":\#(total)}"#
    }

    /// Publishes a press of `button` stating its time (`second`), at QoS 1 unless told.
    static func press(_ client: MQTTClient, _ button: String, at second: Int, qos: QoS = .atLeastOnce) async throws {
        try await client.publishAndWait(
            topic: "p2o/buttons/\(button)/press", payload: Array(time(second).utf8), qos: qos)
    }

    /// Publishes `text` on `p2o/clients/<client>/<leaf>`.
    static func send(_ client: MQTTClient, _ id: String, _ leaf: String, _ text: String, retain: Bool = false)
        async throws
    {
        try await client.publishAndWait(topic: "p2o/clients/\(id)/\(leaf)", payload: Array(text.utf8), retain: retain)
    }

    /// Publishes client `id`'s `status` (online unless told), then its registration for `button`:
    /// a client registered for a button, for the tests of what presses and restarts bring it.
    static func register(_ client: MQTTClient, _ id: String, for button: String, status: String = "online") async throws
    {
        try await send(client, id, "status", status)
        try await send(client, id, "register", button)
    }

    /// A dead-letter record without its `received_at`, which is checked to be an ISO 8601 UTC time
    /// with milliseconds.
    static func letter(_ message: MQTTMessage) throws -> [String: String] {
        let object = try #require(try JSONSerialization.jsonObject(with: Data(message.payload)) as? [String: Any])
        let receivedAt = try #require(object["received_at"] as? String)
        #expect(ISO8601Time.parse(receivedAt).map(ISO8601Time.format) == receivedAt)
        #expect(receivedAt.hasSuffix("Z") && receivedAt.count == 24)
        var fields: [String: String] = [:]
        for (key, value) in object where key != "received_at" {
            fields[key] = (value as? String) ?? "\(value)"
        }
        return fields
    }
}

extension EngineRecorder {
    /// A press of `button` stating its time (`second`).
    func press(_ button: String, at second: Int) async {
        await send(Buttons.time(second), on: "p2o/buttons/\(button)/press")
    }

    /// `text` on `p2o/clients/<id>/<leaf>`.
    @discardableResult
    func send(client id: String, _ leaf: String, _ text: String) async -> [MQTTMessage] {
        await send(text, on: "p2o/clients/\(id)/\(leaf)")
    }

    /// Client `id`'s `status` (online unless told), then its registration for `button`.
    func register(_ id: String, for button: String, status: String = "online") async {
        await send(client: id, "status", status)
        await send(client: id, "register", button)
    }
}
