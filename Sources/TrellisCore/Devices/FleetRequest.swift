#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The limits a fleet request is checked against.
public struct FleetLimits: Sendable, Hashable {
    /// Most log entries kept per device, and the largest `limit` of `logs/get`.
    public var logEntries: Int
    /// Largest device or agent code unit, in UTF-8 bytes.
    public var codeBytes: Int

    public init(logEntries: Int = 200, codeBytes: Int = 1_048_576) {
        self.logEntries = logEntries
        self.codeBytes = codeBytes
    }
}

/// A validated request of the `devices`, `models` or `logs` service.
public enum FleetRequest: Sendable, Hashable {
    case listDevices(modelID: String?, powerstate: Powerstate?)
    case getDevice(id: String)
    /// `nil`: leave as is; `.some(nil)`: clear.
    case updateDevice(id: String, name: String??, modelID: String??)
    case deleteDevice(id: String)
    case restartDevice(id: String)
    case listModels
    case getModel(id: String)
    case createModel(name: String)
    case updateModel(id: String, name: String)
    case deleteModel(id: String)
    case assign(device: String, model: String?)
    case restartModel(id: String)
    case upload(model: String, deviceCode: String, agentCode: String)
    case code(model: String, build: Int?)
    case builds(model: String)
    case logs(device: String, since: Date?, limit: Int)

    /// Every action of each service, in the order docs/devices.md lists them.
    public static let actions: [String: [String]] = [
        "devices": ["list", "get", "update", "delete", "restart"],
        "models": ["list", "get", "create", "update", "delete", "assign", "restart", "upload", "code", "builds"],
        "logs": ["get"],
    ]

    /// The actions that change the fleet; on the per-client topics only operators may send them.
    public static let fleetChanging: Set<String> = [
        "devices/update", "devices/delete", "devices/restart",
        "models/create", "models/update", "models/delete", "models/assign", "models/restart", "models/upload",
    ]

    /// Validates `request` as `service`/`action`.
    public static func parse(service: String, action: String, _ request: JSONRequest,
                             limits: FleetLimits = FleetLimits()) -> Result<FleetRequest, JSONServiceError> {
        Result { try parsing(service: service, action: action, request, limits: limits) }
            .mapError { $0 as? JSONServiceError ?? JSONServiceError(.invalidRequest, "\($0)") }
    }

    private static func parsing(service: String, action: String, _ request: JSONRequest,
                                limits: FleetLimits) throws -> FleetRequest {
        func only(_ members: Set<String>) throws {
            if let error = request.requireOnly(members) { throw error }
        }
        func device(_ member: String) throws -> String { try DeviceIdentifier.member(member, of: request).get() }
        func modelID(_ member: String) throws -> String {
            let id = try request.string(member).get()
            guard !id.isEmpty, id.count <= 64 else { throw JSONServiceError.invalid(member, "a model id such as \"m1\"") }
            return id
        }
        func code(_ member: String) throws -> String {
            let text = try request.string(member).get()
            let size = text.utf8.count
            guard size <= limits.codeBytes else {
                throw JSONServiceError(.tooLarge, "\(member) has \(size) bytes; at most \(limits.codeBytes) are allowed")
            }
            return text
        }

        switch (service, action) {
        case ("devices", "list"):
            try only(["model_id", "powerstate"])
            let model = try request.optionalString("model_id").get()
            let state = try request.optionalString("powerstate").get()
            var powerstate: Powerstate?
            if let state {
                guard let known = Powerstate(rawValue: state) else {
                    throw JSONServiceError.invalid("powerstate", "\"online\" or \"offline\"")
                }
                powerstate = known
            }
            return .listDevices(modelID: model, powerstate: powerstate)
        case ("devices", "get"):
            try only(["id"])
            return .getDevice(id: try device("id"))
        case ("devices", "update"):
            if let member = request.unexpectedMember(allowed: ["id", "name", "model_id"]) {
                throw JSONServiceError(.notEditable, "the member \"\(member)\" cannot be changed; only \"name\" and \"model_id\" can")
            }
            let id = try device("id")
            var name: String??
            switch request.members["name"] {
            case nil: name = nil
            case .null?: name = .some(nil)
            case let .string(text)?: name = .some(try FleetName.validate(text, member: "name").get())
            case let other?: throw JSONServiceError.invalid("name", "a string or null, not \(other.kindName)")
            }
            var model: String??
            switch request.members["model_id"] {
            case nil: model = nil
            case .null?: model = .some(nil)
            case .string?: model = .some(try modelID("model_id"))
            case let other?: throw JSONServiceError.invalid("model_id", "a model id or null, not \(other.kindName)")
            }
            if name == nil && model == nil {
                throw JSONServiceError(.invalidRequest, "nothing to change: give \"name\" or \"model_id\"")
            }
            return .updateDevice(id: id, name: name, modelID: model)
        case ("devices", "delete"):
            try only(["id"])
            return .deleteDevice(id: try device("id"))
        case ("devices", "restart"):
            try only(["id"])
            return .restartDevice(id: try device("id"))

        case ("models", "list"):
            try only([])
            return .listModels
        case ("models", "get"):
            try only(["id"])
            return .getModel(id: try modelID("id"))
        case ("models", "create"):
            try only(["name"])
            return .createModel(name: try FleetName.validate(try request.string("name").get(), member: "name").get())
        case ("models", "update"):
            if let member = request.unexpectedMember(allowed: ["id", "name"]) {
                throw JSONServiceError(.notEditable, "the member \"\(member)\" cannot be changed; only \"name\" can")
            }
            let id = try modelID("id")
            return .updateModel(id: id, name: try FleetName.validate(try request.string("name").get(), member: "name").get())
        case ("models", "delete"):
            try only(["id"])
            return .deleteModel(id: try modelID("id"))
        case ("models", "assign"):
            try only(["device", "model"])
            let id = try device("device")
            switch request.members["model"] {
            case .null?: return .assign(device: id, model: nil)
            default: return .assign(device: id, model: try modelID("model"))
            }
        case ("models", "restart"):
            try only(["id"])
            return .restartModel(id: try modelID("id"))
        case ("models", "upload"):
            try only(["model", "device_code", "agent_code"])
            let model = try modelID("model")
            return .upload(model: model, deviceCode: try code("device_code"), agentCode: try code("agent_code"))
        case ("models", "code"):
            try only(["model", "build"])
            let model = try modelID("model")
            return .code(model: model, build: try request.optionalInteger("build", in: 1...Int(Int32.max)).get())
        case ("models", "builds"):
            try only(["model"])
            return .builds(model: try modelID("model"))

        case ("logs", "get"):
            try only(["device", "since", "limit"])
            let id = try device("device")
            let since = try LogSince.parse(request.members["since"]).get()
            let limit = try request.optionalInteger("limit", in: 1...max(1, limits.logEntries)).get()
            return .logs(device: id, since: since, limit: limit ?? limits.logEntries)

        default:
            let known = actions[service]?.joined(separator: ", ") ?? "none"
            throw JSONServiceError(.unknownAction, "\(service) has no action \"\(action)\"; its actions are \(known)")
        }
    }
}

/// The `since` of `logs/get`: Unix seconds (a number) or an ISO 8601 time.
public enum LogSince {
    public static func parse(_ value: JSONValue?) -> Result<Date?, JSONServiceError> {
        let refusal = JSONServiceError.invalid("since", "a Unix time in seconds or an ISO 8601 time such as \"2026-05-01T10:00:00Z\"")
        switch value {
        case nil, .null?:
            return .success(nil)
        case let .string(text)?:
            if let date = ISO8601Time.parse(text) { return .success(date) }
            if let seconds = Double(text), seconds.isFinite, seconds >= 0 {
                return .success(Date(timeIntervalSince1970: seconds))
            }
            return .failure(refusal)
        case let value?:
            guard let seconds = value.doubleValue, seconds.isFinite, seconds >= 0, seconds < 1.0e11 else {
                return .failure(refusal)
            }
            return .success(Date(timeIntervalSince1970: seconds))
        }
    }
}
