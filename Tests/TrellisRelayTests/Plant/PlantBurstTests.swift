import Foundation
import Testing
import TrellisMQTT
import TrellisRelay
import TrellisTestSupport

/// A burst of requests read at once is handled as if one by one: the relay handles a run of read
/// requests together, but a change waits for every message before it and holds back every one after.
@Suite("Plant requests in a burst, through a real broker")
struct PlantBurstTests {
    @Test("90 requests published without waiting, adds among reads: answered in order, each read after exactly the adds before it")
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
                    request = "ID:\(id);sender:burst;receiver:Host-RPI3B+;payload:p\(id),0x\(21 + adds);operation:REQ_addNewPlant"
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
                    #expect(text.components(separatedBy: "\"plant\"%3A").count - 1 == expected, "reply \(id) is \(text)")
                } else {
                    #expect(text == "ID:\(id);sender:Host-RPI3B+;receiver:burst;payload:p\(id);operation:RES_addNewPlant")
                }
            }
            #expect(try await relay.store.plants().count == 6)
        }
    }
}
