/// Builds capture files byte by byte for the edge cases no live capture makes on demand
/// (reordering, gaps, other link types, pcapng with several interfaces). Each layer follows its
/// published format (pcap-savefile(5), the pcapng draft, RFC 791/8200/9293); the tshark test reads
/// files built here too, so the builder is checked against another reader than the importer.
enum PcapBuilder {
    /// One packet: when, on which interface (pcapng), the frame, and how long it really was.
    struct Packet {
        var microseconds: Int64
        var interface = 0
        var frame: [UInt8]
        var originalLength: Int?
    }

    /// A classic pcap file.
    static func pcap(_ packets: [Packet], linkType: UInt32, bigEndian: Bool = false, nanoseconds: Bool = false)
        -> [UInt8]
    {
        var out: [UInt8] = []
        out += u32(nanoseconds ? 0xA1B2_3C4D : 0xA1B2_C3D4, bigEndian)
        out += u16(2, bigEndian) + u16(4, bigEndian) + u32(0, bigEndian) + u32(0, bigEndian)
        out += u32(65535, bigEndian) + u32(linkType, bigEndian)
        for packet in packets {
            let seconds = packet.microseconds / 1_000_000, micros = packet.microseconds % 1_000_000
            out += u32(UInt32(seconds), bigEndian) + u32(UInt32(nanoseconds ? micros * 1000 : micros), bigEndian)
            out +=
                u32(UInt32(packet.frame.count), bigEndian)
                + u32(UInt32(packet.originalLength ?? packet.frame.count), bigEndian)
            out += packet.frame
        }
        return out
    }

    /// A pcapng file with one section and one interface per link type given, each with its
    /// time resolution (if_tsresol: 6 for microseconds, 9 for nanoseconds).
    static func pcapng(
        _ packets: [Packet], interfaces: [(linkType: UInt16, resolution: UInt8)], bigEndian: Bool = false
    ) -> [UInt8] {
        func block(_ type: UInt32, _ body: [UInt8]) -> [UInt8] {
            let padded = body + [UInt8](repeating: 0, count: (4 - body.count % 4) % 4)
            let length = UInt32(12 + padded.count)
            return u32(type, bigEndian) + u32(length, bigEndian) + padded + u32(length, bigEndian)
        }
        var out = block(
            0x0A0D_0D0A,
            u32(0x1A2B_3C4D, bigEndian) + u16(1, bigEndian) + u16(0, bigEndian) + [UInt8](repeating: 0xFF, count: 8))
        for interface in interfaces {
            let options =
                u16(9, bigEndian) + u16(1, bigEndian) + [interface.resolution, 0, 0, 0] + u16(0, bigEndian)
                + u16(0, bigEndian)
            out += block(1, u16(interface.linkType, bigEndian) + u16(0, bigEndian) + u32(0, bigEndian) + options)
        }
        for packet in packets {
            var units = UInt64(packet.microseconds)
            for _ in 6..<Int(interfaces[packet.interface].resolution) { units *= 10 }
            var body =
                u32(UInt32(packet.interface), bigEndian) + u32(UInt32(units >> 32), bigEndian)
                + u32(UInt32(units & 0xFFFF_FFFF), bigEndian)
            body +=
                u32(UInt32(packet.frame.count), bigEndian)
                + u32(UInt32(packet.originalLength ?? packet.frame.count), bigEndian)
            out += block(6, body + packet.frame)
        }
        return out
    }

    static func u16(_ value: UInt16, _ bigEndian: Bool = true) -> [UInt8] {
        bigEndian ? [UInt8(value >> 8), UInt8(value & 0xFF)] : [UInt8(value & 0xFF), UInt8(value >> 8)]
    }

    static func u32(_ value: UInt32, _ bigEndian: Bool = true) -> [UInt8] {
        let big = [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)]
        return bigEndian ? big : big.reversed()
    }
}
