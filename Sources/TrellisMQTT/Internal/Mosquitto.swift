import CMosquitto

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Process-wide libmosquitto set-up and the translation of its result codes.
enum Mosquitto {
    /// `mosquitto_lib_init` must run once before any client is created; a static let runs it lazily, once.
    static let initialized: Bool = {
        mosquitto_lib_init() == Int32(MOSQ_ERR_SUCCESS.rawValue)
    }()

    static let success = Int32(MOSQ_ERR_SUCCESS.rawValue)
    static let noConnection = Int32(MOSQ_ERR_NO_CONN.rawValue)

    /// libmosquitto's description of a `MOSQ_ERR_*` code.
    static func describe(_ code: Int32) -> String {
        if code == Int32(MOSQ_ERR_ERRNO.rawValue) {
            return String(cString: strerror(errno))
        }
        return String(cString: mosquitto_strerror(code))
    }

    /// libmosquitto's description of an MQTT v5 reason code.
    static func describeReason(_ code: Int32) -> String {
        String(cString: mosquitto_reason_string(code))
    }

    /// Turns a `MOSQ_ERR_*` code into a Swift error, nil on success.
    static func error(_ code: Int32, doing action: @autoclosure () -> String) -> MQTTError? {
        guard code != success else { return nil }
        let kind: MQTTError.Kind
        switch code {
        case Int32(MOSQ_ERR_NO_CONN.rawValue), Int32(MOSQ_ERR_CONN_LOST.rawValue):
            kind = .notConnected
        case Int32(MOSQ_ERR_CONN_REFUSED.rawValue), Int32(MOSQ_ERR_AUTH.rawValue):
            kind = .connectionRefused
        case Int32(MOSQ_ERR_INVAL.rawValue), Int32(MOSQ_ERR_PAYLOAD_SIZE.rawValue),
            Int32(MOSQ_ERR_MALFORMED_UTF8.rawValue), Int32(MOSQ_ERR_OVERSIZE_PACKET.rawValue),
            Int32(MOSQ_ERR_QOS_NOT_SUPPORTED.rawValue), Int32(MOSQ_ERR_NOT_SUPPORTED.rawValue):
            kind = .invalidArgument
        default:
            kind = .library
        }
        return MQTTError(kind: kind, code: code, message: "\(action()): \(describe(code))")
    }
}
