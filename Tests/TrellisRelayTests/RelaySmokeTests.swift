import Foundation
import Testing
import TrellisMQTT
import TrellisTestSupport

@Suite("Relay through a real broker")
struct RelaySmokeTests {
    @Test("the original client's sensor data request is answered on rpi/fromrpi")
    func originalClient() async throws {
        try await withRelay(settings: .losslessPlants) { relay in
            let (phone, inbox) = try await relay.connectCollecting("rpi/fromrpi")
            try await phone.publishAndWait(
                topic: "rpi/torpi",
                payload: Array(
                    "ID:1;sender:Bob's iPhone;receiver:Host-RPI3B+;payload:Fern,0x36;operation:REQ_addNewPlant".utf8))
            try await phone.publishAndWait(
                topic: "rpi/torpi",
                payload: Array(
                    "ID:0;sender:Bob's iPhone;receiver:Host-RPI3B+;payload:all;operation:REQ_plantSensorData".utf8))
            let replies = try await inbox.messages(on: "rpi/fromrpi", count: 2)
            #expect(
                replies[0].text
                    == "ID:1;sender:Host-RPI3B+;receiver:Bob's iPhone;payload:Fern;operation:RES_addNewPlant")
            #expect(
                replies[1].text
                    == #"ID:0;sender:Host-RPI3B+;receiver:Bob's iPhone;payload:[{"at"%3Anull,"moisture"%3Anull,"plant"%3A"Fern","sensor"%3A"0x36","temperature"%3Anull}];operation:RES_plantSensorData"#
            )
        }
    }
}
