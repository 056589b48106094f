import Foundation
import Testing
import TrellisBroker
import TrellisMQTT
import TrellisTestSupport

@Suite("MQTT client against a real Mosquitto")
struct MQTTClientTests {
    @Test("publish and receive at each QoS", arguments: [QoS.atMostOnce, .atLeastOnce, .exactlyOnce])
    func roundTrip(qos: QoS) async throws {
        try await SharedBroker.with { broker, space in
            let subscriber = try await TestClients.connect(to: broker)
            let publisher = try await TestClients.connect(to: broker)
            let inbox = await MessageCollector.collecting(subscriber)
            try await subscriber.subscribe(space("t/\(qos.rawValue)/#"), qos: qos)

            try await publisher.publishAndWait(
                topic: space("t/\(qos.rawValue)/a"), payload: Array("hello".utf8), qos: qos)
            let received = try await inbox.messages(on: space("t/\(qos.rawValue)/a"))
            #expect(received[0].text == "hello")
            #expect(received[0].qos == qos)
            #expect(received[0].retain == false)
            if qos == .atMostOnce {
                #expect(received[0].delivery == nil)
            } else {
                let delivery = try #require(received[0].delivery)
                #expect(delivery.packetID > 0)
                #expect(delivery.connection == 1)
            }
            await subscriber.shutdown()
            await publisher.shutdown()
        }
    }

    @Test("v5 response topic, correlation data, user properties and content type arrive intact")
    func properties() async throws {
        try await SharedBroker.with { broker, space in
            let (subscriber, inbox) = try await TestClients.connectCollecting(to: broker, space("req"))
            let publisher = try await TestClients.connect(to: broker)

            let sent = MQTTProperties(
                responseTopic: space("reply/here"), correlationData: [0, 1, 2, 255],
                userProperties: [UserProperty("a", "1"), UserProperty("a", "2"), UserProperty("b", "é")],
                contentType: "application/json")
            try await publisher.publishAndWait(topic: space("req"), payload: [], qos: .atLeastOnce, properties: sent)
            let received = try await inbox.messages(on: space("req"))
            #expect(received[0].properties == sent)
            #expect(received[0].payload.isEmpty)
            await subscriber.shutdown()
            await publisher.shutdown()
        }
    }

    @Test("retained messages arrive flagged as retained; binary and 256 KiB payloads arrive whole")
    func retainedAndLarge() async throws {
        try await SharedBroker.with { broker, space in
            let publisher = try await TestClients.connect(to: broker)
            let invalidUTF8: [UInt8] = [0xff, 0xfe, 0x00, 0xc3]
            let large = (0..<(256 * 1024)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
            try await publisher.publishAndWait(
                topic: space("keep/bin"), payload: invalidUTF8, qos: .atLeastOnce, retain: true)
            try await publisher.publishAndWait(
                topic: space("keep/large"), payload: large, qos: .atLeastOnce, retain: true)

            let (subscriber, inbox) = try await TestClients.connectCollecting(to: broker, space("keep/#"))
            let binary = try await inbox.messages(on: space("keep/bin"))
            let big = try await inbox.messages(on: space("keep/large"))
            #expect(binary[0].payload == invalidUTF8)
            #expect(binary[0].text == nil)
            #expect(binary[0].retain)
            #expect(big[0].payload == large)
            // The shared broker keeps no 256 KiB retained message for the rest of the run.
            for topic in ["keep/bin", "keep/large"] {
                try await publisher.publishAndWait(topic: space(topic), payload: [], qos: .atLeastOnce, retain: true)
            }
            await subscriber.shutdown()
            await publisher.shutdown()
        }
    }

    @Test("no-local subscriptions do not echo the client's own publishes")
    func noLocal() async throws {
        try await SharedBroker.with { broker, space in
            let client = try await TestClients.connect(to: broker)
            let other = try await TestClients.connect(to: broker)
            let inbox = await MessageCollector.collecting(client)
            try await client.subscribe(space("echo"), qos: .atLeastOnce, noLocal: true)
            try await client.publishAndWait(topic: space("echo"), payload: Array("mine".utf8))
            try await other.publishAndWait(topic: space("echo"), payload: Array("theirs".utf8))
            let received = try await inbox.messages(on: space("echo"))
            #expect(received.map(\.text) == ["theirs"])
            await client.shutdown()
            await other.shutdown()
        }
    }

    @Test("subscriptions made before start are in force once the client says it is connected", arguments: 0..<5)
    func connectedMeansSubscribed(attempt: Int) async throws {
        try await SharedBroker.with { broker, space in
            let publisher = try await TestClients.connect(to: broker)
            let configuration = MQTTConfiguration(
                host: broker.host, port: broker.port,
                clientID: "fresh-\(attempt)-\(UUID().uuidString.prefix(8))",
                cleanStart: false, sessionExpiry: 600)
            let subscriber = try MQTTClient(configuration: configuration)
            let inbox = await MessageCollector.collecting(subscriber)
            for index in 0..<100 {
                try await subscriber.subscribe(space("fresh/\(index)"), qos: .atLeastOnce)
            }
            subscriber.start()
            try await subscriber.waitUntilConnected()
            // Published the moment the client is connected, the last filter subscribed first: a
            // fresh session routes them only if every SUBSCRIBE was already acknowledged.
            for index in (0..<100).reversed() {
                try await publisher.publishAndWait(
                    topic: space("fresh/\(index)"), payload: [UInt8(index)], qos: .atLeastOnce)
            }
            for index in 0..<100 {
                let received = try await inbox.messages(on: space("fresh/\(index)"))
                #expect(received[0].payload == [UInt8(index)])
            }
            await subscriber.shutdown()
            await publisher.shutdown()
        }
    }

    @Test("after the broker is killed and restarted on the same port, the client reconnects, resubscribes and receives")
    func reconnectAndResubscribe() async throws {
        try await withTestBroker { broker in
            let (subscriber, inbox) = try await TestClients.connectCollecting(to: broker, "after/#")

            broker.kill()
            try await broker.restart()
            try await subscriber.waitUntilConnected(timeout: .seconds(15))
            // The resent SUBSCRIBE precedes this client's own PUBLISH on its connection, so seeing the
            // marker proves the subscription is back.
            try await subscriber.publishAndWait(topic: "after/marker", payload: Array("me".utf8))
            try await inbox.messages(on: "after/marker")
            let publisher = try await TestClients.connect(to: broker)
            try await publisher.publishAndWait(topic: "after/restart", payload: Array("again".utf8))
            let received = try await inbox.messages(on: "after/restart")
            #expect(received[0].text == "again")
            await subscriber.shutdown()
            await publisher.shutdown()
        }
    }

    @Test("a client that loses its connection uncleanly has its will delivered")
    func willDelivered() async throws {
        try await SharedBroker.with { broker, space in
            let (watcher, inbox) = try await TestClients.connectCollecting(to: broker, space("clients/doomed/status"))
            let doomed = try await TestClients.connect(to: broker, id: space.id("doomed")) {
                $0.will = MQTTWill(
                    topic: space("clients/doomed/status"), payload: Array("offline".utf8), qos: .atLeastOnce,
                    retain: false)
            }
            doomed.dropConnectionUncleanly()
            let wills = try await inbox.messages(on: space("clients/doomed/status"))
            #expect(wills[0].text == "offline")
            await doomed.shutdown()
            await watcher.shutdown()
        }
    }

    @Test("a clean shutdown does not send the will")
    func cleanShutdownKeepsWill() async throws {
        try await SharedBroker.with { broker, space in
            let (watcher, inbox) = try await TestClients.connectCollecting(to: broker, space("status/#"))
            let leaving = try await TestClients.connect(to: broker) {
                $0.will = MQTTWill(topic: space("status/leaving"), payload: Array("offline".utf8), retain: false)
            }
            await leaving.shutdown()
            try await watcher.publishAndWait(topic: space("status/marker"), payload: Array("done".utf8))
            try await inbox.messages(on: space("status/marker"))
            #expect(await inbox.received(on: space("status/leaving")).isEmpty)
            await watcher.shutdown()
        }
    }

    @Test("an unreachable broker reports failed attempts and does not crash")
    func unreachable() async throws {
        let port = try #require(PortProbe.freeLoopbackPort())
        let client = try MQTTClient(
            configuration: MQTTConfiguration(
                host: "127.0.0.1", port: port, clientID: "lonely",
                reconnectDelay: 0.05...0.2))
        client.start()
        var iterator = client.events.makeAsyncIterator()
        let first = await iterator.next()
        guard case let .connectFailed(reason, _) = first else {
            Issue.record("expected a failed attempt, got \(String(describing: first))")
            return
        }
        #expect(reason.contains("127.0.0.1:\(port)"))
        await #expect(throws: MQTTError.self) { try await client.waitUntilConnected(timeout: .milliseconds(300)) }
        await client.shutdown()
    }
}
