/// Standard base64 (with padding), for binary Engine.IO messages written as text. Written out so
/// the codec needs nothing beyond the standard library and decoding rejects what is not base64.
enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, byte) in alphabet.enumerated() { table[Int(byte)] = UInt8(index) }
        return table
    }()

    static func encode(_ bytes: [UInt8]) -> String {
        var out = [UInt8]()
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index < bytes.count {
            let b0 = bytes[index]
            let b1 = index + 1 < bytes.count ? bytes[index + 1] : 0
            let b2 = index + 2 < bytes.count ? bytes[index + 2] : 0
            out.append(alphabet[Int(b0 >> 2)])
            out.append(alphabet[Int((b0 & 0x03) << 4 | b1 >> 4)])
            out.append(index + 1 < bytes.count ? alphabet[Int((b1 & 0x0F) << 2 | b2 >> 6)] : UInt8(ascii: "="))
            out.append(index + 2 < bytes.count ? alphabet[Int(b2 & 0x3F)] : UInt8(ascii: "="))
            index += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes, or nil when the text is not padded base64.
    static func decode(_ text: Substring) -> [UInt8]? {
        let chars = Array(text.utf8)
        guard chars.count % 4 == 0 else { return nil }
        var out = [UInt8]()
        out.reserveCapacity(chars.count / 4 * 3)
        var index = 0
        while index < chars.count {
            let last = index + 4 == chars.count
            var quad = [UInt8](repeating: 0, count: 4)
            var padding = 0
            for offset in 0..<4 {
                let char = chars[index + offset]
                if char == UInt8(ascii: "="), last, offset >= 2 {
                    padding += 1
                    continue
                }
                guard padding == 0 else { return nil }
                let value = values[Int(char)]
                guard value != 0xFF else { return nil }
                quad[offset] = value
            }
            out.append(quad[0] << 2 | quad[1] >> 4)
            if padding < 2 { out.append(quad[1] << 4 | quad[2] >> 2) }
            if padding < 1 { out.append(quad[2] << 6 | quad[3]) }
            index += 4
        }
        return out
    }
}
