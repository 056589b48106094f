import CMosquitto

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Conversion between `MQTTProperties` and libmosquitto's property lists.
enum MosquittoProperties {
    private static let responseTopic = Int32(MQTT_PROP_RESPONSE_TOPIC.rawValue)
    private static let correlationData = Int32(MQTT_PROP_CORRELATION_DATA.rawValue)
    private static let userProperty = Int32(MQTT_PROP_USER_PROPERTY.rawValue)
    private static let contentType = Int32(MQTT_PROP_CONTENT_TYPE.rawValue)
    private static let sessionExpiry = Int32(MQTT_PROP_SESSION_EXPIRY_INTERVAL.rawValue)
    private static let maximumPacketSize = Int32(MQTT_PROP_MAXIMUM_PACKET_SIZE.rawValue)

    /// Copies the properties Trellis knows out of a list owned by the library.
    static func read(_ list: OpaquePointer?) -> MQTTProperties {
        var properties = MQTTProperties()
        guard let list else { return properties }
        properties.responseTopic = readString(list, responseTopic)
        properties.contentType = readString(list, contentType)

        var bytes: UnsafeMutableRawPointer?
        var length: UInt16 = 0
        if mosquitto_property_read_binary(list, correlationData, &bytes, &length, false) != nil {
            properties.correlationData =
                bytes.map { Array(UnsafeRawBufferPointer(start: $0, count: Int(length))) } ?? []
            free(bytes)
        }

        var name: UnsafeMutablePointer<CChar>?
        var value: UnsafeMutablePointer<CChar>?
        var cursor = mosquitto_property_read_string_pair(list, userProperty, &name, &value, false)
        while cursor != nil {
            if let name, let value {
                properties.userProperties.append(UserProperty(String(cString: name), String(cString: value)))
            }
            free(name)
            free(value)
            name = nil
            value = nil
            cursor = mosquitto_property_read_string_pair(cursor, userProperty, &name, &value, true)
        }
        return properties
    }

    private static func readString(_ list: OpaquePointer, _ identifier: Int32) -> String? {
        var value: UnsafeMutablePointer<CChar>?
        guard mosquitto_property_read_string(list, identifier, &value, false) != nil, let value else { return nil }
        defer { free(value) }
        return String(cString: value)
    }

    /// Builds a property list for a PUBLISH, calls `body` with it and frees it afterwards.
    static func withPublishProperties<T>(
        _ properties: MQTTProperties,
        _ body: (OpaquePointer?) throws -> T
    ) throws -> T {
        guard !properties.isEmpty else { return try body(nil) }
        var list: OpaquePointer?
        defer { mosquitto_property_free_all(&list) }
        if let topic = properties.responseTopic {
            try check(mosquitto_property_add_string(&list, responseTopic, topic), "response topic")
        }
        if let data = properties.correlationData {
            guard data.count <= Int(UInt16.max) else {
                throw MQTTError(kind: .invalidArgument, message: "correlation data is longer than 65535 bytes")
            }
            try data.withUnsafeBytes { buffer in
                try check(
                    mosquitto_property_add_binary(&list, correlationData, buffer.baseAddress, UInt16(buffer.count)),
                    "correlation data")
            }
        }
        for pair in properties.userProperties {
            try check(mosquitto_property_add_string_pair(&list, userProperty, pair.name, pair.value), "user property")
        }
        if let type = properties.contentType {
            try check(mosquitto_property_add_string(&list, contentType, type), "content type")
        }
        return try body(list)
    }

    /// Builds the CONNECT property list (session expiry, maximum packet size), calls `body`, then frees it.
    static func withConnectProperties<T>(
        sessionExpiry expiry: UInt32, maximumPacketSize: Int?, _ body: (OpaquePointer?) throws -> T
    ) throws -> T {
        var list: OpaquePointer?
        defer { mosquitto_property_free_all(&list) }
        if expiry > 0 {
            try check(mosquitto_property_add_int32(&list, sessionExpiry, expiry), "session expiry")
        }
        if let maximumPacketSize {
            try check(
                mosquitto_property_add_int32(&list, Self.maximumPacketSize, UInt32(clamping: maximumPacketSize)),
                "maximum packet size")
        }
        return try body(list)
    }

    private static func check(_ code: Int32, _ what: String) throws {
        if let error = Mosquitto.error(code, doing: "setting \(what)") { throw error }
    }
}
