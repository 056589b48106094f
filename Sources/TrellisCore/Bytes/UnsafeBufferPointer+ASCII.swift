extension UnsafeBufferPointer where Element == UInt8 {
    /// Whether every byte is ASCII (below 0x80), checked eight bytes at a time. ASCII is valid
    /// UTF-8, so a message that passes needs no decoding check before it is cut into strings.
    package var isASCII: Bool {
        guard let base = baseAddress else { return true }
        let raw = UnsafeRawPointer(base)
        var index = 0
        var high: UInt64 = 0
        while index + 8 <= count {
            high |= raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            index += 8
        }
        while index < count {
            high |= UInt64(self[index])
            index += 1
        }
        return high & 0x8080_8080_8080_8080 == 0
    }

    /// Whether the bytes begin with `prefix`'s.
    package func hasPrefix(_ prefix: StaticString) -> Bool {
        count >= prefix.utf8CodeUnitCount
            && UnsafeBufferPointer(start: prefix.utf8Start, count: prefix.utf8CodeUnitCount)
                .sameBytes(as: UnsafeBufferPointer(rebasing: self[..<prefix.utf8CodeUnitCount]))
    }
}
