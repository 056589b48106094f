/// Builds link-layer frames around TCP segments: the layers the importer reads, by the book.
enum FrameBuilder {
    /// The link layers a test can wrap a segment in, with the LINKTYPE_ value of each.
    enum Link: String, CaseIterable, Sendable {
        case ethernet, vlan, null, loop, sll, sll2, raw

        var linkType: UInt32 {
            switch self {
            case .ethernet, .vlan: 1
            case .null: 0
            case .loop: 108
            case .sll: 113
            case .sll2: 276
            case .raw: 101
            }
        }
    }

    /// One TCP segment in IPv4 (with a 4-byte options field when `ipOptions`) or IPv6 (with a
    /// hop-by-hop and a destination options header when `extensionHeaders`).
    struct Segment {
        var ipv6 = false
        var client: UInt16 = 50000
        var broker: UInt16 = 1883
        var toBroker = true
        var sequence: UInt32
        var acknowledgement: UInt32 = 0
        var flags: UInt8 = 0x18 // PSH, ACK
        var payload: [UInt8] = []
        var ipOptions = false
        var extensionHeaders = false
    }

    static let syn: UInt8 = 0x02, ack: UInt8 = 0x10, fin: UInt8 = 0x01

    static func tcp(_ segment: Segment) -> [UInt8] {
        let (source, destination) =
            segment.toBroker ? (segment.client, segment.broker) : (segment.broker, segment.client)
        var out = PcapBuilder.u16(source) + PcapBuilder.u16(destination)
        out += PcapBuilder.u32(segment.sequence) + PcapBuilder.u32(segment.acknowledgement)
        out += [0x50, segment.flags] + PcapBuilder.u16(65535) + [0, 0, 0, 0]
        return out + segment.payload
    }

    static func ip(_ segment: Segment) -> [UInt8] {
        let tcp = tcp(segment)
        if segment.ipv6 {
            let clientAddress = [UInt8](repeating: 0, count: 15) + [1],
                brokerAddress = [UInt8](repeating: 0, count: 15) + [1]
            var extensions: [UInt8] = []
            var next: UInt8 = 6
            if segment.extensionHeaders {
                // hop-by-hop → destination options → TCP
                extensions = [60, 0, 1, 4, 0, 0, 0, 0] + [6, 0, 1, 4, 0, 0, 0, 0]
                next = 0
            }
            var out: [UInt8] = [0x60, 0, 0, 0] + PcapBuilder.u16(UInt16(extensions.count + tcp.count)) + [next, 64]
            out += segment.toBroker ? clientAddress + brokerAddress : brokerAddress + clientAddress
            return out + extensions + tcp
        }
        let options: [UInt8] = segment.ipOptions ? [1, 1, 1, 0] : [] // NOP, NOP, NOP, end of options
        let headerLength = 20 + options.count
        var out: [UInt8] = [0x40 | UInt8(headerLength / 4), 0] + PcapBuilder.u16(UInt16(headerLength + tcp.count))
        out += [0, 1, 0x40, 0, 64, 6, 0, 0]
        out += segment.toBroker ? [127, 0, 0, 2, 127, 0, 0, 1] : [127, 0, 0, 1, 127, 0, 0, 2]
        return out + options + tcp
    }

    static func frame(_ segment: Segment, link: Link) -> [UInt8] {
        let ip = ip(segment)
        let etherType: [UInt8] = segment.ipv6 ? [0x86, 0xDD] : [0x08, 0x00]
        let macs = [UInt8](repeating: 0, count: 12)
        switch link {
        case .ethernet: return macs + etherType + ip
        case .vlan: return macs + [0x81, 0x00, 0x00, 0x2A] + etherType + ip
        case .null: return PcapBuilder.u32(segment.ipv6 ? 30 : 2, false) + ip // little-endian host, macOS's AF_INET6
        case .loop: return PcapBuilder.u32(segment.ipv6 ? 24 : 2) + ip
        case .sll: return [0, 0, 3, 4, 0, 6] + [UInt8](repeating: 0, count: 8) + etherType + ip
        case .sll2: return etherType + [0, 0, 0, 0, 0, 1, 3, 4, 0, 6] + [UInt8](repeating: 0, count: 8) + ip
        case .raw: return ip
        }
    }
}
