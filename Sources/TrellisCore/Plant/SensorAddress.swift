/// Validation and normalization of sensor I2C addresses.
///
/// Sensors are identified by their 7-bit I2C address written in hex, as in `0x36`. The usable
/// range is 0x03–0x77 (the rest is reserved by the I2C specification). The same rule applies to
/// `REQ_addNewPlant` payloads and to the last level of `rpi/sensors/<sensor>` topics.
public enum SensorAddress {
    /// The lowest valid address.
    public static let minimum: UInt8 = 0x03
    /// The highest valid address.
    public static let maximum: UInt8 = 0x77

    /// Returns the canonical spelling (`0x` and two lowercase hex digits) of `text`, or `nil`.
    ///
    /// Accepts `0x` or `0X` followed by one or two hex digits of any case, with no surrounding
    /// spaces, in the range 0x03–0x77: `0X3A` and `0x3a` both give `0x3a`, `0x5` gives `0x05`.
    public static func normalize(_ text: some StringProtocol) -> String? {
        let bytes = Array(text.utf8)
        guard (3...4).contains(bytes.count), bytes[0] == 0x30, bytes[1] == 0x78 || bytes[1] == 0x58 else {
            return nil
        }
        var value = 0
        for byte in bytes.dropFirst(2) {
            guard let digit = sensorHexDigit(byte) else { return nil }
            value = value * 16 + digit
        }
        guard (Int(minimum)...Int(maximum)).contains(value) else { return nil }
        return format(UInt8(value))
    }

    /// Reads an address as the original host did, with Python's `int(text, 16)`: the `0x` is
    /// optional, so `36`, `0x36` and `0X36` name one sensor. Surrounding whitespace is ignored;
    /// signs and `_` between digits (which Python also takes) are not. The value must be in
    /// 0x03–0x77, like every address, and comes back in the canonical spelling.
    public static func hostRead(_ text: some StringProtocol) -> String? {
        var digits = Substring(text.trimmingPlantWhitespace())
        if digits.hasPrefix("0x") || digits.hasPrefix("0X") { digits = digits.dropFirst(2) }
        guard !digits.isEmpty, digits.utf8.count <= 8 else { return nil }
        var value = 0
        for byte in digits.utf8 {
            guard let digit = sensorHexDigit(byte) else { return nil }
            value = value * 16 + digit
        }
        guard (Int(minimum)...Int(maximum)).contains(value) else { return nil }
        return format(UInt8(value))
    }

    /// The topic prefix sensors publish under; the last level is the sensor's address.
    public static let topicPrefix = "rpi/sensors/"

    /// The subscription filter matching every sensor topic, `rpi/sensors/+`.
    public static let topicFilter = topicPrefix + "+"

    /// The normalized address named by a topic `rpi/sensors/<sensor>`, or `nil` when the topic
    /// has another shape (more levels, another prefix) or the address is invalid.
    public static func fromTopic(_ topic: String) -> String? {
        guard topic.hasPrefix(topicPrefix) else { return nil }
        return normalize(topic.dropFirst(topicPrefix.count))
    }

    /// The topic a sensor with this (already normalized) address publishes on.
    public static func topic(for address: String) -> String {
        topicPrefix + address
    }

    /// The canonical spelling of an address value, e.g. `0x0a`.
    public static func format(_ value: UInt8) -> String {
        let digits = Array("0123456789abcdef")
        return "0x" + String(digits[Int(value >> 4)]) + String(digits[Int(value & 0x0F)])
    }

    private static func sensorHexDigit(_ byte: UInt8) -> Int? {
        switch byte {
        case 0x30...0x39: Int(byte - 0x30)
        case 0x41...0x46: Int(byte - 0x41 + 10)
        case 0x61...0x66: Int(byte - 0x61 + 10)
        default: nil
        }
    }
}
