/// The pcapng format: a sequence of blocks (type, total length, body, total length again). A section
/// header block sets the byte order; each interface description block adds an interface with its
/// own link type and time resolution; enhanced, simple and (obsolete) packet blocks carry packets.
/// Other blocks (name resolution, statistics, custom) are skipped.
struct PcapngFormat: Sendable {
    /// One interface of the current section.
    struct Interface: Sendable {
        var linkType: UInt32
        var snapLength: UInt32
        var resolution = TimeResolution.microseconds
        /// if_tsoffset: seconds added to every time stamp.
        var offsetSeconds: Int64 = 0
    }

    var bigEndian = false
    var sectionSeen = false
    var interfaces: [Interface] = []

    /// Reads one block from `bytes`; nil when they do not hold it whole yet.
    mutating func read(_ bytes: ArraySlice<UInt8>) throws(WireProblem) -> ReadStep? {
        guard let type = bytes.be32(0), bytes.count >= 12 else { return nil }
        if type == 0x0A0D_0D0A {
            guard let magic = bytes.be32(8) else { return nil }
            switch magic {
            case 0x1A2B_3C4D: bigEndian = true
            case 0x4D3C_2B1A: bigEndian = false
            default:
                throw WireProblem(
                    "a pcapng section header has the byte-order magic \(hex(bytes.bytes(8, 4) ?? [])): the file is corrupt"
                )
            }
        } else if !sectionSeen {
            throw WireProblem("a pcapng file must start with a section header block")
        }
        let blockType = type == 0x0A0D_0D0A ? type : bytes.u32(0, bigEndian: bigEndian)!
        let length = Int(bytes.u32(4, bigEndian: bigEndian)!)
        guard length >= 12, length % 4 == 0, length <= CaptureFileReader.maximumBlock else {
            throw WireProblem(
                "a pcapng block of type \(blockType) claims a length of \(length) bytes: the file is corrupt")
        }
        guard let block = bytes.bytes(0, length) else { return nil }
        guard block.u32(length - 4, bigEndian: bigEndian) == UInt32(length) else {
            throw WireProblem("a pcapng block of type \(blockType) does not end with its length: the file is corrupt")
        }
        switch blockType {
        case 0x0A0D_0D0A:
            sectionSeen = true
            interfaces = []
            return ReadStep(used: length, packet: nil)
        case 1:
            try describeInterface(block)
            return ReadStep(used: length, packet: nil)
        case 6, 2:
            return ReadStep(used: length, packet: try packet(block, enhanced: blockType == 6))
        case 3:
            return ReadStep(used: length, packet: try simplePacket(block))
        default:
            return ReadStep(used: length, packet: nil)
        }
    }

    private mutating func describeInterface(_ block: ArraySlice<UInt8>) throws(WireProblem) {
        guard let linkType = block.u16(8, bigEndian: bigEndian), let snap = block.u32(12, bigEndian: bigEndian) else {
            throw WireProblem("a pcapng interface description block is too short")
        }
        var interface = Interface(linkType: UInt32(linkType), snapLength: snap)
        for option in options(block.from(16).dropLast(4)) {
            if option.code == 9, let value = option.value.u8(0) {
                interface.resolution = TimeResolution(option: value)
            } else if option.code == 14, let high = option.value.u32(bigEndian ? 0 : 4, bigEndian: bigEndian),
                let low = option.value.u32(bigEndian ? 4 : 0, bigEndian: bigEndian)
            {
                interface.offsetSeconds = Int64(bitPattern: UInt64(high) << 32 | UInt64(low))
            }
        }
        interfaces.append(interface)
    }

    private func packet(_ block: ArraySlice<UInt8>, enhanced: Bool) throws(WireProblem) -> WirePacket {
        let index =
            enhanced
            ? block.u32(8, bigEndian: bigEndian).map(Int.init) : block.u16(8, bigEndian: bigEndian).map(Int.init)
        guard let index, let high = block.u32(12, bigEndian: bigEndian), let low = block.u32(16, bigEndian: bigEndian),
            let captured = block.u32(20, bigEndian: bigEndian), let original = block.u32(24, bigEndian: bigEndian),
            let data = block.bytes(28, Int(captured)), 28 + Int(captured) <= block.count - 4
        else { throw WireProblem("a pcapng packet block is shorter than the packet it claims") }
        guard index < interfaces.count else {
            throw WireProblem("a pcapng packet names interface \(index), but the section describes \(interfaces.count)")
        }
        let interface = interfaces[index]
        let nanos =
            interface.resolution.nanoseconds(UInt64(high) << 32 | UInt64(low))
            &+ interface.offsetSeconds &* 1_000_000_000
        return WirePacket(
            nanoseconds: nanos, linkType: interface.linkType, interface: index, data: data,
            originalLength: max(Int(original), Int(captured)))
    }

    private func simplePacket(_ block: ArraySlice<UInt8>) throws(WireProblem) -> WirePacket {
        guard let original = block.u32(8, bigEndian: bigEndian) else {
            throw WireProblem("a pcapng simple packet block is too short")
        }
        guard let interface = interfaces.first else {
            throw WireProblem("a pcapng simple packet block comes before any interface description")
        }
        var captured = min(Int(original), block.count - 16)
        if interface.snapLength > 0 { captured = min(captured, Int(interface.snapLength)) }
        // A simple packet block has no time stamp: the packet is given time 0.
        return WirePacket(
            nanoseconds: 0, linkType: interface.linkType, interface: 0,
            data: block.bytes(12, captured) ?? [], originalLength: Int(original))
    }

    /// The options of a block body: code, length, value padded to four bytes, ending with code 0.
    private func options(_ bytes: ArraySlice<UInt8>) -> [(code: UInt16, value: ArraySlice<UInt8>)] {
        var found: [(code: UInt16, value: ArraySlice<UInt8>)] = []
        var offset = 0
        while let code = bytes.u16(offset, bigEndian: bigEndian),
            let length = bytes.u16(offset + 2, bigEndian: bigEndian), code != 0
        {
            guard let value = bytes.bytes(offset + 4, Int(length)) else { break }
            found.append((code, value))
            offset += 4 + (Int(length) + 3) / 4 * 4
        }
        return found
    }
}

/// How a pcapng interface counts time (its if_tsresol option): units of 10^-n or 2^-n seconds.
enum TimeResolution: Sendable, Equatable {
    case decimal(UInt8)
    case binary(UInt8)

    static let microseconds = TimeResolution.decimal(6)

    init(option: UInt8) {
        self = option & 0x80 == 0 ? .decimal(option) : .binary(option & 0x7F)
    }

    /// `units` of this resolution as nanoseconds (saturating rather than trapping on absurd values).
    func nanoseconds(_ units: UInt64) -> Int64 {
        switch self {
        case let .decimal(exponent):
            if exponent <= 9 {
                var factor: UInt64 = 1
                for _ in 0..<(9 - exponent) { factor *= 10 }
                let (product, overflow) = units.multipliedReportingOverflow(by: factor)
                return overflow ? Int64.max : Int64(clamping: product)
            }
            var divisor: UInt64 = 1
            for _ in 0..<min(19, exponent - 9) { divisor *= 10 }
            return Int64(clamping: units / divisor)
        case let .binary(exponent):
            let shift = UInt64(min(63, exponent))
            let whole = units >> shift
            let fraction = units & ((1 << shift) - 1)
            let (seconds, overflow) = whole.multipliedReportingOverflow(by: 1_000_000_000)
            if overflow { return Int64.max }
            let part = fraction.multipliedFullWidth(by: 1_000_000_000)
            let nanos = shift == 0 ? 0 : (part.high << (64 - shift)) | (part.low >> shift)
            return Int64(clamping: seconds &+ nanos)
        }
    }
}
