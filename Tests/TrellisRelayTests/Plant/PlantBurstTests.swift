import Foundation
import Testing
import TrellisMQTT
import TrellisRelay
import TrellisTestSupport

/// A burst of requests read at once is handled as if one by one: the relay handles a run of read
/// requests together, but a change waits for every message before it and holds back every one after.
@Suite("Plant requests in a burst, through a real broker")
struct PlantBurstTests {
    @Test(
        "90 requests published without waiting, adds among reads: answered in order, each read after exactly the adds before it"
    )
    func burstOfReadsAndWrites() async throws {
        var settings = RelaySettings.losslessPlants
        settings.spamLimit = 1_000
        try await withRelay(settings: settings) { relay in
            let (phone, inbox) = try await relay.connectCollecting("rpi/fromrpi")
            let count = 90
            var addsBefore: [Int: Int] = [:]
            var adds = 0
            for id in 0..<count {
                let request: String
                if id % 15 == 7 {
                    request =
                        "ID:\(id);sender:burst;receiver:Host-RPI3B+;payload:p\(id),0x\(21 + adds);operation:REQ_addNewPlant"
                    adds += 1
                } else {
                    request = "ID:\(id);sender:burst;receiver:Host-RPI3B+;payload:all;operation:REQ_plantSensorData"
                    addsBefore[id] = adds
                }
                try phone.publish(topic: "rpi/torpi", payload: Array(request.utf8), qos: .atLeastOnce)
            }
            let replies = try await inbox.messages(on: "rpi/fromrpi", count: count, timeout: .seconds(60))
            for (id, reply) in replies.enumerated() {
                let text = reply.text ?? ""
                #expect(text.hasPrefix("ID:\(id);"), "reply \(id) is \(text)")
                if addsBefore[id] == 0 {
                    #expect(text.hasSuffix("operation:ERR_noPlantDataToRequest"), "reply \(id) is \(text)")
                } else if let expected = addsBefore[id] {
                    #expect(text.hasSuffix("operation:RES_plantSensorData"), "reply \(id) is \(text)")
                    #expect(
                        text.components(separatedBy: "\"plant\"%3A").count - 1 == expected, "reply \(id) is \(text)")
                } else {
                    #expect(
                        text == "ID:\(id);sender:Host-RPI3B+;receiver:burst;payload:p\(id);operation:RES_addNewPlant")
                }
            }
            #expect(try await relay.store.plants().count == 6)
        }
    }

    @Test(
        "through a real broker, a burst of requests gets every answer once, in order, with its dead letters",
        arguments: PlantTopics.allCases, [QoS.atMostOnce, .atLeastOnce])
    func liveBurst(_ topics: PlantTopics, _ qos: QoS) async throws {
        var settings = RelaySettings.losslessPlants
        settings.spamLimit = 1000
        try await withRelay(settings: settings) { relay in
            let bob = try await PlantClient.connect(relay, name: "Bob", topics: topics)
            try await addPlant("Fern", sensors: ["0x36"], as: "Bob", from: bob.client, answeredIn: bob.inbox)
            let before = await bob.inbox.received(on: bob.replyTopic).count
            // Most are answered in the client's message callback; every seventh is another operation,
            // every tenth names an unknown plant (an error answer whose dead letter the relay's loop
            // stores, finishing what the callback began).
            let requests = (0..<40).map { index in
                index % 7 == 3
                    ? bob.request("\(index)", "REQ_numPlants")
                    : bob.request("\(index)", "REQ_plantSensorData", payload: index % 10 == 5 ? "Cactus" : "all")
            }
            for request in requests {
                try bob.client.publish(topic: bob.requestTopic, payload: Array(request.utf8), qos: qos)
            }
            let replies = try await bob.inbox.messages(on: bob.replyTopic, count: before + requests.count)
                .dropFirst(before).map { $0.text ?? "" }
            #expect(replies.map { String($0.prefix { $0 != ";" }) } == (0..<40).map { "ID:\($0)" })
            for (index, reply) in replies.enumerated() {
                let tag =
                    index % 7 == 3
                    ? "RES_numPlants" : index % 10 == 5 ? "ERR_noPlantDataToRequest" : "RES_plantSensorData"
                #expect(reply.hasSuffix(";operation:\(tag)"), "\(reply)")
            }
            let letters = try await bob.deadLetters(count: 4)
            #expect(letters.map(\.reason) == Array(repeating: "ERR_noPlantDataToRequest", count: 4))
            #expect(letters.compactMap(\.payload) == [5, 15, 25, 35].map { requests[$0] })
            // Answered once: nothing came twice (a QoS 1 request taken for a redelivery would not be
            // answered at all, one admitted twice would be missing above).
            #expect(await bob.inbox.received(on: bob.replyTopic).count == before + requests.count)
        }
    }
}
