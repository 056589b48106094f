/// The classic pcap format: a 24-byte header (magic, version, snap length, link type), then each
/// packet as a 16-byte record header and its bytes.
///
/// The magic tells the byte order the writer used and the time resolution: `a1b2c3d4` for
/// microseconds, `a1b23c4d` for nanoseconds (both also byte-swapped).
struct PcapFormat: Sendable {
    let bigEndian: Bool
    let nanosecondTimes: Bool
    var linkType: UInt32 = 0
    var headerRead = false

    init?(magic: UInt32) {
        switch magic {
        case 0xA1B2_C3D4: (bigEndian, nanosecondTimes) = (true, false)
        case 0xD4C3_B2A1: (bigEndian, nanosecondTimes) = (false, false)
        case 0xA1B2_3C4D: (bigEndian, nanosecondTimes) = (true, true)
        case 0x4D3C_B2A1: (bigEndian, nanosecondTimes) = (false, true)
        default: return nil
        }
    }

    /// Reads the file header or one record from `bytes`; nil when they do not hold it whole yet.
    mutating func read(_ bytes: ArraySlice<UInt8>) throws(WireProblem) -> ReadStep? {
        if !headerRead {
            guard bytes.count >= 24, let major = bytes.u16(4, bigEndian: bigEndian),
                  let network = bytes.u32(20, bigEndian: bigEndian) else { return nil }
            guard major == 2 else { throw WireProblem("pcap version \(major) is not supported (only 2.x)") }
            // The upper bits may carry the FCS length; the link type is the lower 16.
            linkType = network & 0xFFFF
            headerRead = true
            return ReadStep(used: 24, packet: nil)
        }
        guard let seconds = bytes.u32(0, bigEndian: bigEndian), let fraction = bytes.u32(4, bigEndian: bigEndian),
              let captured = bytes.u32(8, bigEndian: bigEndian), let original = bytes.u32(12, bigEndian: bigEndian)
        else { return nil }
        guard captured <= CaptureFileReader.maximumBlock else {
            throw WireProblem("a packet record claims \(captured) captured bytes: the file is corrupt")
        }
        guard let data = bytes.bytes(16, Int(captured)) else { return nil }
        let nanos = Int64(seconds) * 1_000_000_000 + Int64(fraction) * (nanosecondTimes ? 1 : 1000)
        let packet = WirePacket(nanoseconds: nanos, linkType: linkType, interface: 0, data: data,
                                originalLength: max(Int(original), Int(captured)))
        return ReadStep(used: 16 + Int(captured), packet: packet)
    }
}
