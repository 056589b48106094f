#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension UnsafeBufferPointer where Element == UInt8 {
    /// Whether `other` holds the same bytes, compared with `memcmp`: the message path compares
    /// keys, topics and tags as bytes, where comparing two collections element by element (or two
    /// strings by canonical equivalence) costs many times more.
    package func sameBytes(as other: UnsafeBufferPointer<UInt8>) -> Bool {
        count == other.count && (count == 0 || memcmp(baseAddress!, other.baseAddress!, count) == 0)
    }
}

extension String {
    /// Whether the string is spelled with exactly `bytes` (``UnsafeBufferPointer/sameBytes(as:)``).
    package func hasSameUTF8(as bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard utf8.count == bytes.count else { return false }
        var text = self
        return text.withUTF8 { $0.sameBytes(as: bytes) }
    }

    /// Whether every byte of the string is ASCII, read from its contiguous UTF-8 eight bytes at a time
    /// (``UnsafeBufferPointer/isASCII``): iterating `utf8` byte by byte costs several times more.
    package var isASCII: Bool {
        var text = self
        return text.withUTF8 { $0.isASCII }
    }
}
