import Foundation
import Testing
import TrellisCore

@Suite("Devices: fleet requests")
struct FleetRequestTests {
    static func parse(
        _ service: String, _ action: String, _ text: String,
        limits: FleetLimits = FleetLimits()
    ) -> Result<FleetRequest, JSONServiceError> {
        switch JSONRequest.parse(Array(text.utf8)) {
        case let .failure(error): .failure(error)
        case let .success(request):
            FleetRequest.actions.parse(
                service: service, action: action, request, perClient: false,
                limits: limits)
        }
    }

    @Test(
        "valid requests",
        arguments: [
            ("devices", "list", "", FleetRequest.listDevices(modelID: nil, powerstate: nil)),
            (
                "devices", "list", #"{"model_id":"m2","powerstate":"online"}"#,
                .listDevices(modelID: "m2", powerstate: .online)
            ),
            ("devices", "get", #"{"id":"node-7.a_b"}"#, .getDevice(id: "node-7.a_b")),
            (
                "devices", "update", #"{"id":"n1","name":"Kitchen"}"#,
                .updateDevice(id: "n1", name: .some("Kitchen"), modelID: nil)
            ),
            (
                "devices", "update", #"{"id":"n1","model_id":null}"#,
                .updateDevice(id: "n1", name: nil, modelID: .some(nil))
            ),
            (
                "devices", "update", #"{"id":"n1","name":null,"model_id":"m1"}"#,
                .updateDevice(id: "n1", name: .some(nil), modelID: .some("m1"))
            ),
            ("devices", "delete", #"{"id":"n1","transaction":"x"}"#, .deleteDevice(id: "n1")),
            ("devices", "restart", #"{"id":"n1"}"#, .restartDevice(id: "n1")),
            ("models", "list", "{}", .listModels),
            ("models", "get", #"{"id":"m1"}"#, .getModel(id: "m1")),
            ("models", "create", #"{"name":"Sensor node"}"#, .createModel(name: "Sensor node")),
            ("models", "update", #"{"id":"m1","name":"B"}"#, .updateModel(id: "m1", name: "B")),
            ("models", "delete", #"{"id":"m1"}"#, .deleteModel(id: "m1")),
            ("models", "assign", #"{"device":"n1","model":"m1"}"#, .assign(device: "n1", model: "m1")),
            ("models", "assign", #"{"device":"n1","model":null}"#, .assign(device: "n1", model: nil)),
            ("models", "restart", #"{"id":"m1"}"#, .restartModel(id: "m1")),
            (
                "models", "upload", #"{"model":"m1","device_code":"d","agent_code":""}"#,
                .upload(model: "m1", deviceCode: "d", agentCode: "")
            ),
            ("models", "code", #"{"model":"m1"}"#, .code(model: "m1", build: nil)),
            ("models", "code", #"{"model":"m1","build":3}"#, .code(model: "m1", build: 3)),
            ("models", "builds", #"{"model":"m1"}"#, .builds(model: "m1")),
            ("logs", "get", #"{"device":"n1"}"#, .logs(device: "n1", since: nil, limit: 200)),
            (
                "logs", "get", #"{"device":"n1","since":1795344000,"limit":5}"#,
                .logs(device: "n1", since: Date(timeIntervalSince1970: 1_795_344_000), limit: 5)
            ),
            (
                "logs", "get", #"{"device":"n1","since":"2026-11-22T10:40:00.500Z"}"#,
                .logs(device: "n1", since: Date(timeIntervalSince1970: 1_795_344_000.5), limit: 200)
            )
        ])
    func valid(_ service: String, _ action: String, _ text: String, _ expected: FleetRequest) {
        #expect(Self.parse(service, action, text) == .success(expected))
    }

    @Test(
        "refusals name the member and carry the documented code",
        arguments: [
            ("devices", "get", "{}", JSONErrorCode.invalidRequest, "\"id\""),
            ("devices", "get", #"{"id":7}"#, .invalidRequest, "\"id\""),
            ("devices", "get", #"{"id":"a/b"}"#, .invalidRequest, "\"id\""),
            ("devices", "get", #"{"id":"\#(String(repeating: "x", count: 65))"}"#, .invalidRequest, "\"id\""),
            ("devices", "get", #"{"id":"a","extra":1}"#, .invalidRequest, "\"extra\""),
            ("devices", "list", #"{"powerstate":"asleep"}"#, .invalidRequest, "\"powerstate\""),
            ("devices", "update", #"{"id":"a","powerstate":"online"}"#, .notEditable, "\"powerstate\""),
            ("devices", "update", #"{"id":"a","rssi":-3,"name":"x"}"#, .notEditable, "\"rssi\""),
            ("devices", "update", #"{"id":"a"}"#, .invalidRequest, "nothing to change"),
            ("devices", "update", #"{"id":"a","name":""}"#, .invalidRequest, "\"name\""),
            ("devices", "update", #"{"id":"a","name":3}"#, .invalidRequest, "\"name\""),
            ("models", "create", "{}", .invalidRequest, "\"name\""),
            ("models", "create", #"{"name":" padded"}"#, .invalidRequest, "\"name\""),
            ("models", "update", #"{"id":"m1","devices":[]}"#, .notEditable, "\"devices\""),
            ("models", "assign", #"{"device":"n1"}"#, .invalidRequest, "\"model\""),
            ("models", "code", #"{"model":"m1","build":0}"#, .invalidRequest, "\"build\""),
            ("models", "code", #"{"model":"m1","build":1.5}"#, .invalidRequest, "\"build\""),
            ("logs", "get", #"{"device":"n1","limit":201}"#, .invalidRequest, "\"limit\""),
            ("logs", "get", #"{"device":"n1","since":"yesterday"}"#, .invalidRequest, "\"since\""),
            ("logs", "get", #"{"device":"n1","since":-1}"#, .invalidRequest, "\"since\""),
            ("devices", "reboot", "{}", .unknownAction, "reboot")
        ])
    func refusals(_ service: String, _ action: String, _ text: String, _ code: JSONErrorCode, _ mentions: String) {
        guard case let .failure(error) = Self.parse(service, action, text) else {
            Issue.record("\(service)/\(action) \(text) was accepted")
            return
        }
        #expect(error.code == code)
        #expect(error.message.contains(mentions), "\(error.message)")
    }

    @Test("code units over the limit are too_large; at the limit they pass")
    func codeLimit() {
        let limits = FleetLimits(logEntries: 200, codeBytes: 8)
        let over = Self.parse(
            "models", "upload", #"{"model":"m1","device_code":"123456789","agent_code":""}"#, limits: limits)
        #expect(over == .failure(JSONServiceError(.tooLarge, "device_code has 9 bytes; at most 8 are allowed")))
        let agent = Self.parse(
            "models", "upload", #"{"model":"m1","device_code":"","agent_code":"ééééé"}"#, limits: limits)
        #expect(agent == .failure(JSONServiceError(.tooLarge, "agent_code has 10 bytes; at most 8 are allowed")))
        let exact = Self.parse(
            "models", "upload", #"{"model":"m1","device_code":"12345678","agent_code":""}"#, limits: limits)
        #expect(exact == .success(.upload(model: "m1", deviceCode: "12345678", agentCode: "")))
    }

    @Test("fleet-changing actions are exactly the writes")
    func fleetChanging() {
        let reads = FleetRequest.actions.all.filter { !$0.changesFleet }.map(\.path)
        #expect(
            reads == [
                "devices/list", "devices/get", "models/list", "models/get", "models/code", "models/builds", "logs/get"
            ])
        #expect(
            FleetRequest.actions.all.allSatisfy {
                $0.changesFleet == ($0.access == .operators(may: "change the fleet"))
            })
    }

    /// docs/devices.md lists the actions as ``FleetRequest/actions`` declares them: the table, in order,
    /// and the sentence that names the fleet-changing ones.
    @Test("docs/devices.md names every action, in order, and the fleet-changing ones")
    func documented() throws {
        let docs = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("docs/devices.md")
        let text = try String(contentsOf: docs, encoding: .utf8)
        let rows = text.split(separator: "\n").compactMap { line -> String? in
            guard line.hasPrefix("| `"), let end = line.dropFirst(3).firstIndex(of: "`") else { return nil }
            let name = String(line[line.index(line.startIndex, offsetBy: 3)..<end])
            return !name.contains("<") && FleetRequest.actions.services.contains(where: { name.hasPrefix("\($0)/") })
                ? name : nil
        }
        #expect(rows == FleetRequest.actions.all.map(\.path))
        let writes = FleetRequest.actions.services.compactMap { service -> String? in
            let names = FleetRequest.actions.actions(of: service).filter(\.changesFleet).map(\.name)
            return names.isEmpty ? nil : "`\(service)/\(names.joined(separator: "|"))`"
        }.joined(separator: ", ")
        #expect(text.replacingOccurrences(of: "\n", with: " ").contains("the fleet (\(writes))"), "\(writes)")
    }
}
