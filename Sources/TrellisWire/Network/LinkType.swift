/// The link-layer header types the importer reads, and the names of common ones it refuses.
///
/// Values are the LINKTYPE_ numbers of pcap and pcapng files (tcpdump.org/linktypes.html).
enum LinkType {
    static let null: UInt32 = 0
    static let ethernet: UInt32 = 1
    static let rawBSD: UInt32 = 12
    static let raw: UInt32 = 101
    static let linuxSLL: UInt32 = 113
    static let loop: UInt32 = 108
    static let ipv4: UInt32 = 228
    static let ipv6: UInt32 = 229
    static let linuxSLL2: UInt32 = 276

    /// What the importer reads, for the message that refuses the rest.
    static let supported = "Ethernet (with 802.1Q tags), BSD loopback (NULL, LOOP), Linux cooked (SLL, SLL2), raw IP"

    /// A readable name for a link type the importer does not read.
    static func name(_ type: UInt32) -> String {
        let names: [UInt32: String] = [
            6: "IEEE802_5 (Token Ring)", 9: "PPP", 10: "FDDI", 50: "PPP_HDLC", 51: "PPP_ETHER",
            105: "IEEE802_11 (Wi-Fi)", 119: "IEEE802_11_PRISM", 127: "IEEE802_11_RADIOTAP", 147: "USER0",
            163: "IEEE802_11_AVS", 189: "USB_LINUX", 192: "PPI", 195: "IEEE802_15_4", 201: "BLUETOOTH_HCI_H4_WITH_PHDR",
            215: "IEEE802_15_4_NOFCS", 220: "USB_LINUX_MMAPPED", 249: "NETLINK", 253: "NFLOG", 254: "NETANALYZER"
        ]
        return names[type].map { "\(type) (\($0))" } ?? "\(type)"
    }
}

/// The network-layer packet a link-layer frame carries.
enum NetworkPacket {
    case ipv4(ArraySlice<UInt8>)
    case ipv6(ArraySlice<UInt8>)
    /// Not IP (ARP, LLDP, …): nothing to read.
    case other
}

enum LinkLayer {
    /// The IP packet inside `frame` of link type `type`; throws for a link type not read.
    static func network(_ frame: ArraySlice<UInt8>, type: UInt32) throws(WireProblem) -> NetworkPacket {
        switch type {
        case LinkType.ethernet:
            return ethernet(frame)
        case LinkType.null:
            // The address family in the capturing host's byte order.
            guard let little = frame.le32(0), let big = frame.be32(0) else { return .other }
            return family(little < 256 ? little : big, frame.from(4))
        case LinkType.loop:
            guard let big = frame.be32(0) else { return .other }
            return family(big, frame.from(4))
        case LinkType.linuxSLL:
            guard let protocolType = frame.be16(14) else { return .other }
            return etherType(protocolType, frame.from(16))
        case LinkType.linuxSLL2:
            guard let protocolType = frame.be16(0), frame.count >= 20 else { return .other }
            return etherType(protocolType, frame.from(20))
        case LinkType.raw, LinkType.rawBSD:
            switch frame.u8(0).map({ $0 >> 4 }) {
            case 4: return .ipv4(frame)
            case 6: return .ipv6(frame)
            default: return .other
            }
        case LinkType.ipv4:
            return .ipv4(frame)
        case LinkType.ipv6:
            return .ipv6(frame)
        default:
            throw WireProblem(
                "link type \(LinkType.name(type)) is not supported; the importer reads \(LinkType.supported)")
        }
    }

    /// An Ethernet II frame, skipping any number of 802.1Q / 802.1ad tags.
    static func ethernet(_ frame: ArraySlice<UInt8>) -> NetworkPacket {
        var offset = 12
        while let type = frame.be16(offset) {
            if type == 0x8100 || type == 0x88A8 || type == 0x9100 {
                offset += 4
                continue
            }
            return etherType(type, frame.from(offset + 2))
        }
        return .other
    }

    static func etherType(_ type: UInt16, _ payload: ArraySlice<UInt8>) -> NetworkPacket {
        switch type {
        case 0x0800: return .ipv4(payload)
        case 0x86DD: return .ipv6(payload)
        default: return .other
        }
    }

    /// BSD address families: 2 is IPv4; IPv6 is 24, 28 or 30 depending on the BSD, 10 on Linux.
    static func family(_ value: UInt32, _ payload: ArraySlice<UInt8>) -> NetworkPacket {
        switch value {
        case 2: return .ipv4(payload)
        case 10, 24, 28, 30: return .ipv6(payload)
        default: return .other
        }
    }
}
