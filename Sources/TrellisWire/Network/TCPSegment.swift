/// One TCP segment read from an IP packet: addresses, ports, sequence number, flags and payload.
struct TCPSegment {
    /// 4 bytes for IPv4, 16 for IPv6.
    var sourceAddress: ArraySlice<UInt8>
    var destinationAddress: ArraySlice<UInt8>
    var sourcePort: UInt16
    var destinationPort: UInt16
    var sequence: UInt32
    var acknowledgement: UInt32
    var flags: UInt8
    var payload: ArraySlice<UInt8>
    /// True when the snap length cut the payload short: `payload` holds less than was sent.
    var truncated: Bool

    var syn: Bool { flags & 0x02 != 0 }
    var fin: Bool { flags & 0x01 != 0 }
    var rst: Bool { flags & 0x04 != 0 }
    var ack: Bool { flags & 0x10 != 0 }
}

/// What reading an IP packet gave.
enum IPReading {
    case tcp(TCPSegment)
    /// Not TCP, or a header too short to hold what it claims: nothing to do.
    case ignored
    /// A fragment of a larger IP packet: reassembling IP fragments is not done.
    case fragment
}

enum IPLayer {
    /// The TCP segment of an IPv4 packet (options skipped, Ethernet padding trimmed).
    static func ipv4(_ packet: ArraySlice<UInt8>) -> IPReading {
        guard let first = packet.u8(0), first >> 4 == 4, let total = packet.be16(2),
            let flagsAndOffset = packet.be16(6), let proto = packet.u8(9)
        else { return .ignored }
        let headerLength = Int(first & 0x0F) * 4
        guard headerLength >= 20, Int(total) >= headerLength, let source = packet.bytes(12, 4),
            let destination = packet.bytes(16, 4)
        else { return .ignored }
        guard proto == 6 else { return .ignored }
        if flagsAndOffset & 0x3FFF != 0 { return .fragment }
        // total 0 happens with TCP segmentation offload on the capturing host: take what was captured.
        let length = total == 0 ? packet.count - headerLength : Int(total) - headerLength
        return tcp(packet.from(headerLength), length: length, source: source, destination: destination)
    }

    /// The TCP segment of an IPv6 packet, after walking its extension headers.
    static func ipv6(_ packet: ArraySlice<UInt8>) -> IPReading {
        guard let first = packet.u8(0), first >> 4 == 6, let payloadLength = packet.be16(4),
            var next = packet.u8(6), let source = packet.bytes(8, 16), let destination = packet.bytes(24, 16)
        else { return .ignored }
        var offset = 40
        var remaining = payloadLength == 0 ? packet.count - 40 : Int(payloadLength)
        while next != 6 {
            let header = packet.from(offset)
            var length: Int
            switch next {
            case 0, 43, 60: // hop-by-hop, routing, destination options
                guard let units = header.u8(1) else { return .ignored }
                length = (Int(units) + 1) * 8
            case 51: // authentication header
                guard let units = header.u8(1) else { return .ignored }
                length = (Int(units) + 2) * 4
            case 44: // fragment
                guard let offsetAndMore = header.be16(2) else { return .ignored }
                if offsetAndMore & 0xFFF9 != 0 { return .fragment }
                length = 8
            default:
                return .ignored
            }
            guard let following = header.u8(0) else { return .ignored }
            next = following
            offset += length
            remaining -= length
        }
        return tcp(packet.from(offset), length: remaining, source: source, destination: destination)
    }

    /// The TCP header and payload; `length` is the segment's length as the IP header gives it.
    static func tcp(_ bytes: ArraySlice<UInt8>, length: Int, source: ArraySlice<UInt8>, destination: ArraySlice<UInt8>)
        -> IPReading
    {
        guard let sourcePort = bytes.be16(0), let destinationPort = bytes.be16(2), let sequence = bytes.be32(4),
            let acknowledgement = bytes.be32(8), let offsetByte = bytes.u8(12), let flags = bytes.u8(13)
        else { return .ignored }
        let headerLength = Int(offsetByte >> 4) * 4
        guard headerLength >= 20, length >= headerLength else { return .ignored }
        let wanted = length - headerLength
        let captured = max(0, min(bytes.count, length) - headerLength)
        let payload = bytes.from(headerLength).prefix(captured)
        return .tcp(
            TCPSegment(
                sourceAddress: source, destinationAddress: destination, sourcePort: sourcePort,
                destinationPort: destinationPort, sequence: sequence, acknowledgement: acknowledgement,
                flags: flags, payload: payload, truncated: captured < wanted))
    }
}
