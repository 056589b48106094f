import Foundation
import Testing
import TrellisCore
import TrellisMQTT
import TrellisRelay
import TrellisStore
import TrellisTestSupport

/// What of the device fleet only a broker shows: a device's will reaching Trellis when the device
/// dies, and the retained info records a late subscriber receives. The fleet's logic is tested on the
/// engine over both stores, in ``DeviceFleetEngineTests``.
@Suite("Devices: fleet through the broker", .serialized)
struct DeviceFleetTests {
    @Test(
        "a late subscriber gets the retained info; a device killed: its will makes it offline and a Status entry streams"
    )
    func willMakesOffline() async throws {
        try await withRelay { relay in
            let console = try await FleetConsole.open(relay)
            let node = try await console.connectOnline(relay, id: "door")
            try await node.publish("telemetry", #"{"rssi":-61,"agent_id":"a7"}"#)
            let online = deviceInfo("door", powerstate: .online, rssi: -61, agentID: "a7")
            try await console.waitFor("devices/door/info", online)
            let (_, lateInbox) = try await relay.connectCollecting("devices/+/info")
            let retained = try await lateInbox.messages(on: "devices/door/info")
            #expect(retained[0].retain && retained[0].text == online)

            node.client.dropConnectionUncleanly()
            try await console.waitFor("devices/door/info", deviceInfo("door", rssi: -61, agentID: "a7"))
            try await console.waitFor("trellis/logs/door") {
                $0.contains(#""message":"offline""#) && $0.contains(#""type":"Status""#)
            }
            let entries = try await console.data("logs", "get", #"{"device":"door"}"#)
            #expect(entries.contains(#""message":"online""#) && entries.contains(#""message":"offline""#))
        }
    }
}
