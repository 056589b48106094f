#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Whether a device is connected, from its retained `devices/<id>/status`.
public enum Powerstate: String, Sendable, Hashable, CaseIterable, Codable {
    case online
    case offline

    /// Reads a status payload: `online` or `offline`, surrounding whitespace ignored.
    public init?(payload: [UInt8]) {
        guard let text = String(validating: payload, as: UTF8.self) else { return nil }
        self.init(rawValue: text.trimmingWhitespace())
    }
}

/// A device as `devices/<id>/info` and the `devices` actions show it. Unknown values are
/// `null`; a device that never sent a status reads `offline`.
public struct DeviceRecord: Sendable, Hashable, Encodable {
    public var id: String
    public var name: String?
    public var powerstate: Powerstate
    public var rssi: Int?
    public var agentID: String?
    public var agentStatus: String?
    public var modelID: String?

    public init(
        id: String, name: String? = nil, powerstate: Powerstate = .offline, rssi: Int? = nil,
        agentID: String? = nil, agentStatus: String? = nil, modelID: String? = nil
    ) {
        (self.id, self.name, self.powerstate, self.rssi, self.agentID) = (id, name, powerstate, rssi, agentID)
        (self.agentStatus, self.modelID) = (agentStatus, modelID)
    }

    enum CodingKeys: String, CodingKey {
        case id, name, powerstate, rssi
        case agentID = "agent_id"
        case agentStatus = "agent_status"
        case modelID = "model_id"
    }

    /// Every key, `null` for what is unknown.
    public func encode(to encoder: any Encoder) throws {
        try encoder.encodeEveryKey([
            CodingKeys.id: id, .name: name, .powerstate: powerstate, .rssi: rssi, .agentID: agentID,
            .agentStatus: agentStatus, .modelID: modelID
        ])
    }
}

/// A model: a named group of devices that run the same code, with numbered builds.
public struct ModelRecord: Sendable, Hashable, Encodable {
    public var id: String
    public var name: String
    /// Ids of its devices, sorted.
    public var devices: [String]
    /// The newest build's number, `nil` before the first upload.
    public var latestBuild: Int?

    public init(id: String, name: String, devices: [String] = [], latestBuild: Int? = nil) {
        (self.id, self.name, self.devices, self.latestBuild) = (id, name, devices, latestBuild)
    }

    enum CodingKeys: String, CodingKey {
        case id, name, devices
        case latestBuild = "latest_build"
    }

    public func encode(to encoder: any Encoder) throws {
        try encoder.encodeEveryKey([CodingKeys.id: id, .name: name, .devices: devices, .latestBuild: latestBuild])
    }
}

/// One build of a model's code.
public struct CodeRevision: Sendable, Hashable, Encodable {
    public var model: String
    public var build: Int
    public var deviceCode: String
    public var agentCode: String
    public var createdAt: Date

    public init(model: String, build: Int, deviceCode: String, agentCode: String, createdAt: Date) {
        (self.model, self.build, self.deviceCode, self.agentCode) = (model, build, deviceCode, agentCode)
        self.createdAt = createdAt
    }

    enum CodingKeys: String, CodingKey {
        case model, build
        case deviceCode = "device_code"
        case agentCode = "agent_code"
        case createdAt = "created_at"
    }

    public func encode(to encoder: any Encoder) throws {
        try encoder.encodeEveryKey([
            CodingKeys.model: model, .build: build, .deviceCode: deviceCode, .agentCode: agentCode,
            .createdAt: ISO8601Time.format(createdAt)
        ])
    }
}

/// A build's number and time, as `models/builds` lists them.
public struct BuildSummary: Sendable, Hashable, Encodable {
    public var build: Int
    public var createdAt: Date

    public init(build: Int, createdAt: Date) {
        self.build = build
        self.createdAt = createdAt
    }

    enum CodingKeys: String, CodingKey {
        case build
        case createdAt = "created_at"
    }

    public func encode(to encoder: any Encoder) throws {
        try encoder.encodeEveryKey([CodingKeys.build: build, .createdAt: ISO8601Time.format(createdAt)])
    }
}

/// Model ids are `m` and a number Trellis assigns (`m1`, `m2`, …), never reused.
public enum ModelIdentifier {
    /// The id of the model stored under `number`.
    public static func text(_ number: Int64) -> String { "m\(number)" }

    /// The stored number of a model id, nil when `text` cannot be one.
    public static func number(_ text: String) -> Int64? {
        guard text.hasPrefix("m"), text.count > 1, text.count <= 19 else { return nil }
        let digits = text.dropFirst()
        guard digits.allSatisfy({ $0.isASCII && $0.isNumber }), digits.first != "0" else { return nil }
        return Int64(digits)
    }
}
