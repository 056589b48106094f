import TrellisCore

/// One packet as a capture file holds it: when it was seen, on which interface and link type, the
/// bytes captured and how long the packet really was.
public struct WirePacket: Sendable {
    /// Nanoseconds since 1970 (UTC).
    public var nanoseconds: Int64
    /// The capture's link-layer header type (a LINKTYPE_ value, such as 1 for Ethernet).
    public var linkType: UInt32
    /// The interface it was captured on: 0 in a classic pcap, the interface's index in a pcapng section.
    public var interface: Int
    /// The bytes captured, at most the snap length.
    public var data: ArraySlice<UInt8>
    /// The packet's length on the wire; more than `data.count` when the snap length cut it.
    public var originalLength: Int

    public init(nanoseconds: Int64, linkType: UInt32, interface: Int, data: ArraySlice<UInt8>, originalLength: Int) {
        self.nanoseconds = nanoseconds
        self.linkType = linkType
        self.interface = interface
        self.data = data
        self.originalLength = originalLength
    }

    /// The time in microseconds, as capture records hold it.
    public var microseconds: Int64 { nanoseconds / 1000 }
}

/// A problem in a capture, worded for the person who made it: the connection (when one is
/// concerned), the time of the packet and what is wrong. Reading goes on after most problems.
public struct WireProblem: Error, Sendable, Hashable, CustomStringConvertible {
    /// `127.0.0.1:50312 → 127.0.0.1:1883`, or nil for a problem of the file itself.
    public var connection: String?
    /// When the packet concerned was seen, microseconds since 1970; nil when no packet is concerned.
    public var microseconds: Int64?
    public var message: String

    public init(connection: String? = nil, microseconds: Int64? = nil, _ message: String) {
        self.connection = connection
        self.microseconds = microseconds
        self.message = message
    }

    public var description: String {
        var prefix = ""
        if let connection { prefix += connection + ": " }
        if let microseconds { prefix += "at " + CaptureTime.format(microseconds: microseconds) + ": " }
        return prefix + message
    }
}

/// Bounds-checked reads of big- and little-endian integers from captured bytes.
///
/// Captured packets come from files nobody checked, so a read past the end gives nil instead of
/// trapping: a short header becomes a reported problem, never a crash. Offsets are relative to the
/// slice's start, so the same code reads a slice cut from anywhere in a buffer.
extension ArraySlice where Element == UInt8 {
    /// The byte at `offset`, or nil past the end.
    @inline(__always)
    func u8(_ offset: Int) -> UInt8? {
        guard offset >= 0, offset < count else { return nil }
        return self[startIndex + offset]
    }

    /// A 16-bit integer at `offset`, most significant byte first (network order).
    @inline(__always)
    func be16(_ offset: Int) -> UInt16? {
        guard offset >= 0, offset + 2 <= count else { return nil }
        let base = startIndex + offset
        return UInt16(self[base]) << 8 | UInt16(self[base + 1])
    }

    /// A 32-bit integer at `offset`, most significant byte first (network order).
    @inline(__always)
    func be32(_ offset: Int) -> UInt32? {
        guard offset >= 0, offset + 4 <= count else { return nil }
        let base = startIndex + offset
        return UInt32(self[base]) << 24 | UInt32(self[base + 1]) << 16 | UInt32(self[base + 2]) << 8
            | UInt32(self[base + 3])
    }

    /// A 16-bit integer at `offset`, least significant byte first.
    @inline(__always)
    func le16(_ offset: Int) -> UInt16? {
        be16(offset).map(\.byteSwapped)
    }

    /// A 32-bit integer at `offset`, least significant byte first.
    @inline(__always)
    func le32(_ offset: Int) -> UInt32? {
        be32(offset).map(\.byteSwapped)
    }

    /// A 16- or 32-bit integer in the byte order a capture file declared.
    @inline(__always)
    func u16(_ offset: Int, bigEndian: Bool) -> UInt16? { bigEndian ? be16(offset) : le16(offset) }

    @inline(__always)
    func u32(_ offset: Int, bigEndian: Bool) -> UInt32? { bigEndian ? be32(offset) : le32(offset) }

    /// `length` bytes from `offset`, or nil when the slice is shorter.
    @inline(__always)
    func bytes(_ offset: Int, _ length: Int) -> ArraySlice<UInt8>? {
        guard offset >= 0, length >= 0, offset + length <= count else { return nil }
        return self[(startIndex + offset)..<(startIndex + offset + length)]
    }

    /// Everything from `offset` on (empty when `offset` is at or past the end).
    @inline(__always)
    func from(_ offset: Int) -> ArraySlice<UInt8> {
        self[Swift.min(endIndex, startIndex + Swift.max(0, offset))...]
    }
}
