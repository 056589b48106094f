import Foundation
import Testing
import TrellisCore
import TrellisMQTTTypes
import TrellisRelay
import TrellisTestSupport

/// The QoS of each kind of message Trellis publishes (``PublishQoS``): answers, fan-out and dead
/// letters at ``PublishQoS/delivered``, retained states at QoS 1, and nothing promised to a QoS 0
/// request. Why not QoS 2 is said there; what the broker does with each is shown in `ResendTests`.
@Suite("The QoS of what Trellis publishes")
struct PublishQoSTests {
    static let numPlants = Wire.request("7", from: "Alice", "REQ_numPlants")
    static let devices = JSONTopics(prefix: "trellis")

    @Test("an answer goes at QoS 1 to a QoS 1 or 2 request, and at QoS 0 to a QoS 0 one")
    func answers() async throws {
        try await withRecorder(.inMemory) { relay async throws in
            for (asked, answered) in [
                (QoS.atMostOnce, QoS.atMostOnce), (.atLeastOnce, .atLeastOnce), (.exactlyOnce, .atLeastOnce)
            ] {
                let plant = await relay.harness.send(Self.numPlants, on: "rpi/torpi/Alice", qos: asked)
                #expect(plant.map(\.topic) == ["rpi/fromrpi/Alice"])
                #expect(plant.map(\.qos) == [answered])
                let json = await relay.harness.send(
                    "{}", on: Self.devices.request(service: "devices", action: "list", client: "ops"),
                    qos: asked)
                #expect(json.map(\.topic) == [Self.devices.response(service: "devices", action: "list", client: "ops")])
                #expect(json.map(\.qos) == [answered])
            }
        }
    }

    @Test("a press fans out at QoS 1, and the button's retained state goes at QoS 1, retained")
    func fanOut() async throws {
        try await withRecorder(.inMemory) { relay async throws in
            await relay.register("phone", for: "door")
            await relay.press("door", at: 1)
            #expect(relay.messages(on: "p2o/clients/phone/button-press").map(\.qos) == [PublishQoS.delivered])
            #expect(relay.messages(on: "p2o/buttons/door/state").last?.qos == .atLeastOnce)
            #expect(relay.messages(on: "p2o/buttons/door/state").last?.retain == true)
        }
    }

    @Test("a dead letter goes at QoS 1")
    func deadLetter() async throws {
        try await withRecorder(.inMemory) { relay async throws in
            await relay.send("soon", on: "p2o/buttons/door/press")
            #expect(relay.messages(on: "trellis/deadletter").map(\.qos) == [PublishQoS.delivered])
        }
    }
}
