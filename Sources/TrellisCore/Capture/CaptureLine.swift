#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import TrellisMQTTTypes

/// Capture lines: one JSON object per message.
///
/// Trellis writes
/// `{"t":"2026-11-22T10:41:05.123456Z","topic":"rpi/torpi","payload":"…","qos":1,"retain":false}`,
/// with `"payload_base64"` instead of `"payload"` when the payload is not UTF-8 text, and
/// `"properties":{"response_topic","correlation_data_base64","user_properties":[[k,v],…],"content_type"}`
/// when any is set, and `"client"` (the publisher's client id) after `retain` when known; keys always in that order, so the same record is always the same line.
///
/// Reading also accepts what `mosquitto_sub -F '%j'` (or `%J`) prints: `tst`, `topic`, `qos`,
/// `retain` (0/1), `payloadlen`, `payload` (a string, null when empty, or embedded JSON with `%J`),
/// `mid`, and `properties` with `response-topic`, `correlation-data`, `user-properties` (an
/// object) and `content-type`.
extension CaptureRecord {
    /// The record as one capture line, without the line break.
    public var jsonLine: String {
        var out =
            "{\"t\":\"" + CaptureTime.format(microseconds: microseconds) + "\",\"topic\":" + JSONText.string(topic)
        if let text {
            out += ",\"payload\":" + JSONText.string(text)
        } else {
            out += ",\"payload_base64\":\"" + Data(payload).base64EncodedString() + "\""
        }
        out += ",\"qos\":\(qos),\"retain\":\(retain)"
        if let client { out += ",\"client\":" + JSONText.string(client) }
        if !properties.isEmpty {
            var fields: [String] = []
            if let responseTopic = properties.responseTopic {
                fields.append("\"response_topic\":" + JSONText.string(responseTopic))
            }
            if let correlation = properties.correlationData {
                fields.append("\"correlation_data_base64\":\"" + Data(correlation).base64EncodedString() + "\"")
            }
            if !properties.userProperties.isEmpty {
                let pairs = properties.userProperties.map {
                    "[" + JSONText.string($0.name) + "," + JSONText.string($0.value) + "]"
                }
                fields.append("\"user_properties\":[" + pairs.joined(separator: ",") + "]")
            }
            if let contentType = properties.contentType {
                fields.append("\"content_type\":" + JSONText.string(contentType))
            }
            out += ",\"properties\":{" + fields.joined(separator: ",") + "}"
        }
        return out + "}"
    }

    /// Reads one capture line (Trellis's own or `mosquitto_sub -F '%j'`'s).
    public static func decode(line: some StringProtocol) -> Result<CaptureRecord, CaptureLineError> {
        decode(bytes: Array(line.utf8))
    }

    /// Reads one capture line given as bytes, which need not be valid UTF-8 inside strings.
    public static func decode(bytes: [UInt8]) -> Result<CaptureRecord, CaptureLineError> {
        let value: CaptureJSON.Value
        do {
            value = try CaptureJSON.parse(bytes)
        } catch {
            return .failure(CaptureLineError("not valid JSON at column \(error.column): \(error.message)"))
        }
        guard case let .object(members) = value else {
            return .failure(CaptureLineError("a capture line must be a JSON object, not \(value.typeName)"))
        }
        var seen = Set<String>()
        for member in members where !seen.insert(member.name).inserted {
            return .failure(CaptureLineError("the field \"\(member.name)\" appears twice"))
        }
        do {
            if members.contains(where: { $0.name == "tst" }) {
                return .success(try MosquittoSubLine.decode(members))
            }
            return .success(try TrellisLine.decode(members))
        } catch {
            return .failure(error)
        }
    }
}

/// Field readers shared by both line shapes.
private struct Fields {
    let members: [CaptureJSON.Member]
    /// Prefix of field names in messages, such as `properties.`.
    var path = ""

    func member(_ name: String) -> CaptureJSON.Member? { members.first { $0.name == name } }
    func value(_ name: String) -> CaptureJSON.Value? { member(name)?.value }

    func text(_ name: String, required: Bool = false) throws(CaptureLineError) -> String? {
        guard let value = value(name) else {
            if required { throw CaptureLineError("missing \"\(path)\(name)\"") }
            return nil
        }
        guard case let .string(bytes) = value else {
            throw CaptureLineError("\"\(path)\(name)\" must be a string, not \(value.typeName)")
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw CaptureLineError("\"\(path)\(name)\" is not valid UTF-8")
        }
        return text
    }

    func integer(_ name: String) throws(CaptureLineError) -> Int? {
        guard let value = value(name) else { return nil }
        guard case let .number(text) = value, let number = Int(text) else {
            throw CaptureLineError("\"\(name)\" must be a whole number, not \(describe(value))")
        }
        return number
    }

    func qos() throws(CaptureLineError) -> Int {
        guard let qos = try integer("qos") else { return 0 }
        guard (0...2).contains(qos) else { throw CaptureLineError("\"qos\" must be 0, 1 or 2, not \(qos)") }
        return qos
    }

    func time(_ name: String) throws(CaptureLineError) -> Int64 {
        let text = try text(name, required: true)!
        guard let micros = CaptureTime.parseMicroseconds(text) else {
            throw CaptureLineError(
                "\"\(name)\" is not an ISO 8601 time such as 2026-11-22T10:41:05.123456Z: \"\(text)\"")
        }
        return micros
    }

    func topic() throws(CaptureLineError) -> String {
        let topic = try text("topic", required: true)!
        guard !topic.isEmpty else { throw CaptureLineError("\"topic\" is empty") }
        if topic.contains("+") || topic.contains("#") {
            throw CaptureLineError("\"topic\" contains a wildcard (+ or #), so it cannot be published: \"\(topic)\"")
        }
        if topic.utf8.contains(0) { throw CaptureLineError("\"topic\" contains a NUL character") }
        return topic
    }

    func describe(_ value: CaptureJSON.Value) -> String {
        if case let .number(text) = value { return text }
        if case let .string(bytes) = value { return "the string \"\(String(decoding: bytes, as: UTF8.self))\"" }
        return value.typeName
    }
}

/// Trellis's own capture lines.
private enum TrellisLine {
    static let known: Set<String> = ["t", "topic", "payload", "payload_base64", "qos", "retain", "client", "properties"]
    static let knownProperties: Set<String> = [
        "response_topic", "correlation_data_base64", "user_properties", "content_type"
    ]

    static func decode(_ members: [CaptureJSON.Member]) throws(CaptureLineError) -> CaptureRecord {
        if let unknown = members.first(where: { !known.contains($0.name) }) {
            throw CaptureLineError(
                "unknown field \"\(unknown.name)\" (a capture line has t, topic, payload or payload_base64, qos, retain, client, properties)"
            )
        }
        let fields = Fields(members: members)
        let micros = try fields.time("t")
        let topic = try fields.topic()
        let payload: [UInt8]
        switch (fields.value("payload"), fields.value("payload_base64")) {
        case (.some, .some):
            throw CaptureLineError("both \"payload\" and \"payload_base64\" are given; use one")
        case (nil, nil):
            throw CaptureLineError("missing \"payload\" (text) or \"payload_base64\"")
        case let (.some(value), nil):
            guard case let .string(bytes) = value else {
                throw CaptureLineError("\"payload\" must be a string, not \(value.typeName)")
            }
            guard String(validating: bytes, as: UTF8.self) != nil else {
                throw CaptureLineError("\"payload\" is not valid UTF-8; write binary payloads as \"payload_base64\"")
            }
            payload = bytes
        case (nil, .some):
            payload = try base64(fields, "payload_base64")
        }
        let qos = try fields.qos()
        var retain = false
        if let value = fields.value("retain") {
            guard case let .bool(flag) = value else {
                throw CaptureLineError("\"retain\" must be true or false, not \(fields.describe(value))")
            }
            retain = flag
        }
        var properties = MQTTProperties()
        if let value = fields.value("properties") {
            guard case let .object(members) = value else {
                throw CaptureLineError("\"properties\" must be an object, not \(value.typeName)")
            }
            if let unknown = members.first(where: { !knownProperties.contains($0.name) }) {
                throw CaptureLineError(
                    "unknown property \"\(unknown.name)\" (properties are response_topic, correlation_data_base64, user_properties, content_type)"
                )
            }
            let inner = Fields(members: members, path: "properties.")
            properties.responseTopic = try inner.text("response_topic")
            if inner.value("correlation_data_base64") != nil {
                properties.correlationData = try base64(inner, "correlation_data_base64", path: "properties.")
            }
            properties.contentType = try inner.text("content_type")
            if let list = inner.value("user_properties") {
                properties.userProperties = try userProperties(list)
            }
        }
        let client = try fields.text("client")
        return CaptureRecord(
            microseconds: micros, topic: topic, payload: payload, qos: qos, retain: retain, properties: properties,
            client: client)
    }

    static func base64(_ fields: Fields, _ name: String, path: String = "") throws(CaptureLineError) -> [UInt8] {
        guard case let .string(bytes)? = fields.value(name) else {
            throw CaptureLineError("\"\(path)\(name)\" must be a base64 string")
        }
        guard let data = Data(base64Encoded: String(decoding: bytes, as: UTF8.self)) else {
            throw CaptureLineError("\"\(path)\(name)\" is not valid base64")
        }
        return Array(data)
    }

    static func userProperties(_ value: CaptureJSON.Value) throws(CaptureLineError) -> [UserProperty] {
        let shape = "\"properties.user_properties\" must be a list of [name, value] pairs of strings"
        guard case let .array(items) = value else { throw CaptureLineError(shape) }
        var pairs: [UserProperty] = []
        for item in items {
            guard case let .array(pair) = item, pair.count == 2,
                case let .string(name) = pair[0], case let .string(value) = pair[1],
                let nameText = String(validating: name, as: UTF8.self),
                let valueText = String(validating: value, as: UTF8.self)
            else { throw CaptureLineError(shape) }
            pairs.append(.init(nameText, valueText))
        }
        return pairs
    }
}

/// Lines printed by `mosquitto_sub -F '%j'` (and `%J`).
private enum MosquittoSubLine {
    static func decode(_ members: [CaptureJSON.Member]) throws(CaptureLineError) -> CaptureRecord {
        let fields = Fields(members: members)
        let micros = try fields.time("tst")
        let topic = try fields.topic()
        let qos = try fields.qos()
        var retain = false
        switch fields.value("retain") {
        case nil: break
        case let .bool(flag)?: retain = flag
        case let .number(text)? where text == "0" || text == "1": retain = text == "1"
        case let value?: throw CaptureLineError("\"retain\" must be 0 or 1, not \(fields.describe(value))")
        }
        let payload: [UInt8]
        if let member = fields.member("payload") {
            switch member.value {
            case .null: payload = []
            case let .string(bytes): payload = bytes
            default: payload = Array(member.raw) // %J: a JSON payload embedded as it was
            }
        } else {
            payload = []
        }
        if let length = try fields.integer("payloadlen"), length != payload.count {
            throw CaptureLineError(
                "\"payload\" holds \(payload.count) bytes but \"payloadlen\" says \(length): mosquitto_sub -F '%j' cuts a binary payload at its first NUL byte, so this message cannot be replayed as it was; record it with trellis record"
            )
        }
        var properties = MQTTProperties()
        if let value = fields.value("properties") {
            guard case let .object(members) = value else {
                throw CaptureLineError("\"properties\" must be an object, not \(value.typeName)")
            }
            let inner = Fields(members: members, path: "properties.")
            properties.responseTopic = try inner.text("response-topic")
            if case let .string(bytes)? = inner.value("correlation-data") { properties.correlationData = bytes }
            properties.contentType = try inner.text("content-type")
            if let list = inner.value("user-properties") {
                guard case let .object(pairs) = list else {
                    throw CaptureLineError("\"properties.user-properties\" must be an object")
                }
                for pair in pairs {
                    guard case let .string(bytes) = pair.value, let text = String(validating: bytes, as: UTF8.self)
                    else {
                        throw CaptureLineError("user property \"\(pair.name)\" must have a UTF-8 string value")
                    }
                    properties.userProperties.append(.init(pair.name, text))
                }
            }
        }
        return CaptureRecord(
            microseconds: micros, topic: topic, payload: payload, qos: qos, retain: retain, properties: properties)
    }
}
