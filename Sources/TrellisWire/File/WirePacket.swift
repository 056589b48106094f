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
