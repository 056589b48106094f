import Foundation
import Testing
import TrellisMQTT
import TrellisRelay
import TrellisTestSupport

@Suite("Broker faults and bursts")
struct BrokerFaultTests {
    static func request(_ id: Int, from client: String) -> [UInt8] {
        Array("ID:\(id);sender:\(client);receiver:Host-RPI3B+;payload:;operation:REQ_numPlants".utf8)
    }

    @Test("the broker killed and restarted during traffic: requests sent during the outage are answered afterwards")
    func brokerRestartDuringTraffic() async throws {
        var settings = RelaySettings.losslessPlants
        settings.spamLimit = 1_000_000
        try await withRelay(settings: settings) { relay in
            let phone = try await relay.connect(id: "phone") {
                $0.cleanStart = false
                $0.sessionExpiry = 600
            }
            let inbox = await MessageCollector.collecting(phone)
            try await phone.subscribe("rpi/fromrpi/phone", qos: .atLeastOnce)
            for id in 0..<20 {
                try await phone.publishAndWait(topic: "rpi/torpi/phone", payload: Self.request(id, from: "phone"))
            }
            try await inbox.messages(on: "rpi/fromrpi/phone", count: 20)
            // A killed broker keeps only what it last saved: let it save both sessions first.
            try await relay.broker.waitForPersistence(after: Date().addingTimeInterval(0.01))

            relay.broker.kill()
            for id in 20..<40 {
                try phone.publish(topic: "rpi/torpi/phone", payload: Self.request(id, from: "phone"), qos: .atLeastOnce)
            }
            try await relay.broker.restart()
            for id in 40..<60 {
                try phone.publish(topic: "rpi/torpi/phone", payload: Self.request(id, from: "phone"), qos: .atLeastOnce)
            }
            try await inbox.wait(timeout: .seconds(60), "answers to all 60 requests") { messages in
                Set(messages.compactMap { Self.replyID($0) }).count == 60
            }
            let ids = await inbox.received(on: "rpi/fromrpi/phone").compactMap { Self.replyID($0) }
            #expect(Set(ids) == Set(0..<60))
            #expect(try await relay.store.plants().isEmpty)
        }
    }

    @Test("a burst of 20,000 QoS 1 requests is answered in full and the broker drops nothing")
    func burst() async throws {
        var settings = RelaySettings.losslessPlants
        settings.spamLimit = 1_000_000
        try await withRelay(settings: settings) { relay in
            let phone = try await relay.connect(id: "burst")
            let inbox = await MessageCollector.collecting(phone)
            try await phone.subscribe("rpi/fromrpi/burst", qos: .atLeastOnce)
            let count = 20_000
            for id in 0..<count {
                try phone.publish(topic: "rpi/torpi/burst", payload: Self.request(id, from: "burst"), qos: .atLeastOnce)
            }
            // A bound, not a speed: alone it takes about a minute in a debug build; under the whole
            // suite on two shared cores one run needed more than 240 s (17,674 answers by then).
            try await inbox.messages(on: "rpi/fromrpi/burst", count: count, timeout: .seconds(600))
            let ids = await inbox.received(on: "rpi/fromrpi/burst").compactMap { Self.replyID($0) }
            #expect(Set(ids).count == count)
            #expect(!relay.broker.log().contains("Outgoing messages are being dropped"))
        }
    }

    /// The ID of a plant tracker reply.
    static func replyID(_ message: MQTTMessage) -> Int? {
        guard let text = message.text, text.hasPrefix("ID:") else { return nil }
        return Int(text.dropFirst(3).prefix { $0 != ";" })
    }
}
