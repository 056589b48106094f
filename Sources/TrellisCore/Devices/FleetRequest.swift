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
}

/// The `since` of `logs/get`: Unix seconds (a number) or an ISO 8601 time.
public enum LogSince {
    public static func parse(_ value: JSONValue?) -> Result<Date?, JSONServiceError> {
        let refusal = JSONServiceError.invalid(
            "since", "a Unix time in seconds or an ISO 8601 time such as \"2026-05-01T10:00:00Z\"")
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
