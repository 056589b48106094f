import Foundation
import Logging
import Testing
import TrellisCore
import TrellisMQTT
import TrellisRelay
import TrellisStore
import TrellisStoreSQLite
import TrellisTestSupport

/// A captured session and its golden output, from `Fixtures/`.
struct ReplayFixture: Sendable, CustomTestStringConvertible {
    var name: String

    static let all = [
        ReplayFixture(name: "ios-sensor-data"), ReplayFixture(name: "plant-errors"),
        ReplayFixture(name: "buttons-offline-client")
    ]

    var testDescription: String { name }

    static func load(_ file: String) throws -> [CaptureRecord] {
        let url = try #require(Bundle.module.resourceURL).appendingPathComponent("Fixtures/\(file)")
        return try CaptureFile.records(of: Array(Data(contentsOf: url)), name: file).records
    }

    /// The golden files record the plant and button contracts; Home Assistant discovery, which
    /// rides on the same messages, has tests of its own and is off here.
    static var settings: RelaySettings {
        var settings = RelaySettings.losslessPlants
        settings.homeAssistantEnabled = false
        return settings
    }

    func capture() throws -> [CaptureRecord] { try Self.load("\(name).capture.jsonl") }
    func golden() throws -> [CaptureRecord] { try Self.load("\(name).golden.jsonl") }
}

/// Topic and payload of a reply, with the receive-clock time of a dead letter blanked out.
func timeless(_ topic: String, _ payload: [UInt8]) -> String {
    let text = String(decoding: payload, as: UTF8.self)
    guard let range = text.range(of: #""received_at":"[^"]*""#, options: .regularExpression) else {
        return "\(topic) \(text)"
    }
    return "\(topic) " + text.replacingCharacters(in: range, with: #""received_at":"*""#)
}

@Suite("Replay of captured sessions")
struct ReplayFixtureTests {
    @Test("offline replay equals the golden file", arguments: ReplayFixture.all)
    func offline(_ fixture: ReplayFixture) async throws {
        let store = try SQLiteStore.inMemory()
        let outcome = try await OfflineReplay.run(try fixture.capture(), store: store, settings: ReplayFixture.settings)
        try await store.close()
        let diff = OfflineReplay.compare(outputs: outcome.outputs, golden: try fixture.golden())
        #expect(diff == nil, "\(diff ?? "")")
        #expect(outcome.outputs.count > 0)
    }

    @Test("offline replay is deterministic and stamps each output with its input's time")
    func deterministic() async throws {
        let fixture = ReplayFixture(name: "plant-errors")
        let capture = try fixture.capture()
        var runs: [[String]] = []
        for _ in 0..<2 {
            let store = try SQLiteStore.inMemory()
            runs.append(
                try await OfflineReplay.run(capture, store: store, settings: ReplayFixture.settings).outputs.map(
                    \.jsonLine))
            try await store.close()
        }
        #expect(runs[0] == runs[1])
        let inputTimes = Set(ReplaySelection().select(capture).inputs.map(\.microseconds))
        for line in runs[0] {
            #expect(inputTimes.contains(try CaptureRecord.decode(line: line).get().microseconds))
        }
    }

    @Test(
        "through a real broker, Trellis's replies match the golden file apart from times", arguments: ReplayFixture.all)
    func live(_ fixture: ReplayFixture) async throws {
        let golden = try fixture.golden()
        let selection = ReplaySelection()
        let inputs = selection.select(try fixture.capture()).inputs
        try await withRelay(settings: ReplayFixture.settings) { relay in
            let listener = try await relay.connect()
            let inbox = await MessageCollector.collecting(listener)
            // Everything, of which Trellis's outputs are kept (its own `trellis/` topics but the
            // dead letters left out), and the copies of replies on the Response Topics named.
            try await listener.subscribe("#")
            let responseTopics = Set(inputs.compactMap(\.properties.responseTopic))
            let deadLetters = relay.settings.deadLetterTopic
            let published: @Sendable (MQTTMessage) -> Bool = { message in
                if responseTopics.contains(message.topic) { return true }
                guard selection.isTrellisPublication(message.topic) else { return false }
                return !message.topic.hasPrefix("trellis/") || message.topic == deadLetters
            }
            let publisher = try await relay.connect()
            let sent = try await LiveReplay.publish(inputs, through: publisher, pacing: .noDelay)
            #expect(sent == inputs.count)
            // A last request of a sender of its own (no spam count of the capture's senders touches
            // it): the relay answers in the order it received, so once its answer is in, every
            // input before it has been answered, and anything more would be an extra reply.
            let plant = relay.settings.plantPrefix
            let marker =
                "ID:0;sender:replay-marker;receiver:\(relay.settings.hostName);payload:;operation:REQ_numPlants"
            let isMarkerAnswer: @Sendable (MQTTMessage) -> Bool = {
                $0.topic == "\(plant)/fromrpi" && ($0.text ?? "").contains(";receiver:replay-marker;")
            }
            try await publisher.publishAndWait(topic: "\(plant)/torpi", payload: Array(marker.utf8), qos: .atLeastOnce)
            try await inbox.wait(timeout: .seconds(30), "the answer to the last request") {
                $0.contains(where: isMarkerAnswer)
            }
            // Compared topic by topic: MQTT keeps the order of one topic, not across topics.
            let received = Self.topicByTopic(await inbox.messages.filter { published($0) && !isMarkerAnswer($0) })
            let expected = Self.topicByTopic(golden.map { MQTTMessage(topic: $0.topic, payload: $0.payload) })
            let diff = CaptureDiff.diff(expected: expected, actual: received)
            #expect(diff == nil, "\(diff ?? "")")
        }
    }
}

extension ReplayFixtureTests {
    /// The timeless lines of `messages`, topic by topic (sorted by name), each topic's in their order.
    static func topicByTopic(_ messages: [MQTTMessage]) -> [String] {
        messages.enumerated()
            .sorted { ($0.element.topic, $0.offset) < ($1.element.topic, $1.offset) }
            .map { timeless($0.element.topic, $0.element.payload) }
    }
}

@Suite("Replay selection")
struct ReplaySelectionTests {
    let t = Date(timeIntervalSince1970: 1_795_430_465)

    @Test("Trellis's own publications are skipped, derived from one list of topics; JSON requests are replayed")
    func skipsTrellisOutputs() {
        let topics = [
            "trellis/status", "trellis/deadletter", "rpi/fromrpi", "rpi/fromrpi/bob", "p2o/buttons/b/state",
            "p2o/clients/c/connection-response", "p2o/clients/c/register-response",
            "p2o/clients/c/unregister-response", "p2o/clients/c/button-press",
            "devices/d1/info", "devices/d1/command", "trellis/logs/d1", "trellis/models/m1/info",
            "trellis/response/devices/list", "trellis/clients/c/response/devices/get",
            "rpi/torpi", "rpi/torpi/bob", "rpi/sensors/0x36", "p2o/buttons/b/press", "p2o/clients/c/status",
            "p2o/clients/c/register", "p2o/clients/c/unregister", "other/topic",
            "devices/d1/status", "devices/d1/log", "trellis/request/devices/list",
            "trellis/clients/c/request/devices/get"
        ]
        let records = topics.map { CaptureRecord(t: t, topic: $0, text: "x") }
        let (inputs, skipped) = ReplaySelection().select(records)
        #expect(inputs.map(\.topic) == Array(topics[15...]))
        #expect(skipped == [.trellisPublication: 15])
        #expect(ReplaySelection(includeTrellisPublications: true).select(records).inputs.count == topics.count)
    }

    @Test("prefixes follow the settings")
    func prefixes() {
        var settings = RelaySettings()
        settings.plantPrefix = "garden"
        settings.buttonPrefix = "btn"
        settings.trellisPrefix = "relay"
        let records = ["garden/fromrpi", "btn/buttons/b/state", "relay/status", "rpi/fromrpi"].map {
            CaptureRecord(t: t, topic: $0, text: "")
        }
        #expect(ReplaySelection(settings: settings).select(records).inputs.map(\.topic) == ["rpi/fromrpi"])
    }

    @Test("a reply on a response topic named earlier is skipped; --only limits the topics")
    func responseTopicsAndOnly() {
        let request = CaptureRecord(
            t: t, topic: "rpi/torpi", text: "q", properties: MQTTProperties(responseTopic: "me/replies"))
        let records = [
            CaptureRecord(t: t, topic: "me/replies", text: "early"), request,
            CaptureRecord(t: t, topic: "me/replies", text: "reply"),
            CaptureRecord(t: t, topic: "p2o/buttons/b/press", text: "")
        ]
        let (inputs, skipped) = ReplaySelection().select(records)
        #expect(inputs.map(\.text) == ["early", "q", ""])
        #expect(skipped == [.responseTopic: 1])
        let only = ReplaySelection(only: ["p2o/#"]).select(records)
        #expect(only.inputs.map(\.topic) == ["p2o/buttons/b/press"])
        #expect(only.skipped == [.notSelected: 2, .responseTopic: 1])
    }

    @Test("records convert to messages and back with QoS, retain and properties")
    func conversion() {
        let record = CaptureRecord(
            t: t, topic: "a", payload: [0xFF], qos: 2, retain: true,
            properties: MQTTProperties(
                responseTopic: "r", correlationData: [1], userProperties: [.init("k", "v")], contentType: "c"))
        let message = record.message
        #expect(message.qos == .exactlyOnce && message.retain)
        #expect(message.properties.userProperties == [UserProperty("k", "v")])
        #expect(CaptureRecord(message, at: t) == record)
    }
}
