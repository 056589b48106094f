#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One entry of a device's log, normalized: `{"message","timestamp","type"}`.
public struct DeviceLogEntry: Sendable, Hashable, Encodable {
    /// When it was logged: the device's `timestamp`, or when Trellis received it.
    public var timestamp: Date
    /// `Device`, `Agent`, `Status` (Trellis's own entries), or what the device said.
    public var type: String
    public var message: String

    public init(timestamp: Date, type: String, message: String) {
        self.timestamp = timestamp
        self.type = type
        self.message = message
    }

    /// The type of the entries Trellis writes itself (online, offline, restart sent, …).
    public static let statusType = "Status"
    /// The type of a plain-text line from a device.
    public static let deviceType = "Device"
    /// The longest message kept, in bytes; longer ones are refused.
    public static let maximumMessageBytes = 64 * 1024
    /// The longest type, in characters.
    public static let maximumTypeLength = 32

    /// A `Status` entry Trellis writes.
    public static func status(_ message: String, at time: Date) -> DeviceLogEntry {
        DeviceLogEntry(timestamp: time, type: statusType, message: message)
    }

    enum CodingKeys: String, CodingKey { case timestamp, type, message }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(ISO8601Time.format(timestamp), forKey: .timestamp)
        try container.encode(type, forKey: .type)
        try container.encode(message, forKey: .message)
    }

    /// Reads a `devices/<id>/log` payload: a JSON object `{"type":…,"message":…}` with an
    /// optional ISO 8601 `"timestamp"`, or any other UTF-8 text as one `Device` line (a trailing
    /// line break dropped). `receivedAt` stands in for a missing timestamp.
    public static func parse(_ payload: [UInt8], receivedAt: Date) -> Result<DeviceLogEntry, DeviceLogRejection> {
        guard let text = String(validating: payload, as: UTF8.self) else { return .failure(.invalidUTF8) }
        guard payload.count <= maximumMessageBytes else { return .failure(.tooLarge) }
        let trimmed = text.trimmingWhitespace()
        if trimmed.isEmpty { return .failure(.empty) }
        guard trimmed.hasPrefix("{") else {
            var line = text
            while line.last == "\n" || line.last == "\r" || line.last == "\r\n" { line.removeLast() }
            return .success(DeviceLogEntry(timestamp: receivedAt, type: deviceType, message: line))
        }
        guard let fields = try? JSONDecoder().decode(LogLineFields.self, from: Data(payload)) else {
            return .failure(.invalidJSON)
        }
        guard case let .success(message?) = fields.message else { return .failure(.invalidMessage) }
        var type = deviceType
        switch fields.type {
        case .success(nil): break
        case let .success(given?)
        where !given.isEmpty && given.count <= maximumTypeLength
            && !given.unicodeScalars.contains(where: { $0.value < 0x20 }):
            type = given
        default: return .failure(.invalidType)
        }
        var timestamp = receivedAt
        switch fields.timestamp {
        case .success(nil): break
        case let .success(given?):
            guard let date = ISO8601Time.parse(given) else { return .failure(.invalidTimestamp) }
            timestamp = date
        case .failure: return .failure(.invalidTimestamp)
        }
        return .success(DeviceLogEntry(timestamp: timestamp, type: type, message: message))
    }
}

/// The three members of a log line's object that Trellis reads, each a string, absent (or null),
/// or of another type. Decoded without building the rest of the object: every log line goes
/// through here, and a ``JSONValue`` of the whole line cost a fifth of the relay's time per line.
/// The decoder still reads the whole text first, so malformed JSON anywhere is refused.
private struct LogLineFields: Decodable {
    struct WrongType: Error {}

    var message: Result<String?, WrongType>
    var type: Result<String?, WrongType>
    var timestamp: Result<String?, WrongType>

    enum CodingKeys: String, CodingKey { case message, type, timestamp }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        func string(_ key: CodingKeys) -> Result<String?, WrongType> {
            // Absent and null are nil; any other type than a string throws.
            do { return .success(try container.decodeIfPresent(String.self, forKey: key)) } catch {
                return .failure(WrongType())
            }
        }
        message = string(.message)
        type = string(.type)
        timestamp = string(.timestamp)
    }
}

/// Why a log line was dead-lettered.
public enum DeviceLogRejection: String, Error, Sendable, CaseIterable {
    case invalidUTF8 = "invalid_utf8"
    case tooLarge = "log_too_large"
    case empty = "empty_log"
    case invalidJSON = "invalid_json"
    case invalidMessage = "invalid_log_message"
    case invalidType = "invalid_log_type"
    case invalidTimestamp = "invalid_log_timestamp"
}

/// What a device reports on `devices/<id>/telemetry`: any of `rssi` (integer dBm),
/// `agent_id`, `agent_status`. A member that is absent changes nothing; `null` clears it.
public struct DeviceTelemetry: Sendable, Hashable {
    /// `nil`: not reported; `.some(nil)`: cleared.
    public var rssi: Int??
    public var agentID: String??
    public var agentStatus: String??

    public init(rssi: Int?? = nil, agentID: String?? = nil, agentStatus: String?? = nil) {
        self.rssi = rssi
        self.agentID = agentID
        self.agentStatus = agentStatus
    }

    /// The accepted signal strengths, in dBm.
    public static let rssiRange = -200...0

    /// Reads a telemetry payload; other members are ignored.
    public static func parse(_ payload: [UInt8]) -> Result<DeviceTelemetry, DeviceTelemetryRejection> {
        guard String(validating: payload, as: UTF8.self) != nil else { return .failure(.invalidUTF8) }
        guard let value = try? JSONDecoder().decode(JSONValue.self, from: Data(payload)) else {
            return .failure(.invalidJSON)
        }
        guard case let .object(members) = value else { return .failure(.notAnObject) }
        var telemetry = DeviceTelemetry()
        switch members["rssi"] {
        case nil: break
        case .null?: telemetry.rssi = .some(nil)
        case let value?:
            guard let number = value.integerValue, rssiRange.contains(Int(clamping: number)) else {
                return .failure(.invalidRSSI)
            }
            telemetry.rssi = .some(Int(number))
        }
        for (key, keyPath) in [("agent_id", \DeviceTelemetry.agentID), ("agent_status", \DeviceTelemetry.agentStatus)] {
            switch members[key] {
            case nil: break
            case .null?: telemetry[keyPath: keyPath] = .some(nil)
            case let .string(text)? where !text.isEmpty && text.count <= 64:
                telemetry[keyPath: keyPath] = .some(text)
            default:
                return .failure(key == "agent_id" ? .invalidAgentID : .invalidAgentStatus)
            }
        }
        return .success(telemetry)
    }
}

/// Why a telemetry message was dead-lettered.
public enum DeviceTelemetryRejection: String, Error, Sendable, CaseIterable {
    case invalidUTF8 = "invalid_utf8"
    case invalidJSON = "invalid_json"
    case notAnObject = "not_an_object"
    case invalidRSSI = "invalid_rssi"
    case invalidAgentID = "invalid_agent_id"
    case invalidAgentStatus = "invalid_agent_status"
}
