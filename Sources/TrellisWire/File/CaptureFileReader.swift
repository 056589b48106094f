/// Reads a classic pcap or a pcapng file fed in chunks, packet by packet.
///
/// The file is never held whole: ``push(_:)`` appends a chunk, ``next()`` returns the packets it
/// completes, and the bytes already read are dropped, so memory stays at one chunk plus one packet
/// however large the capture. The format is told by the first four bytes.
public struct CaptureFileReader: Sendable {
    /// What the reader is reading.
    enum Format: Sendable {
        case undecided
        case pcap(PcapFormat)
        case pcapng(PcapngFormat)
    }

    /// Blocks and records longer than this are taken as corruption, not buffered.
    static let maximumBlock = 64 << 20

    var buffer: [UInt8] = []
    var position = 0
    var format = Format.undecided
    /// Bytes of the file consumed before `buffer[0]`, for the offsets in problems.
    var consumed = 0
    /// Set once the file cannot be read further (its header or a block is corrupt).
    public private(set) var failed = false

    public init() {}

    /// Appends the next chunk of the file.
    public mutating func push(_ chunk: some Collection<UInt8>) {
        if position > 0 && position >= buffer.count / 2 {
            consumed += position
            buffer.removeFirst(position)
            position = 0
        }
        buffer.append(contentsOf: chunk)
    }

    /// The next whole packet, nil when more bytes are needed, or a problem of the file itself,
    /// after which the reader stops (``failed``).
    public mutating func next() throws(WireProblem) -> WirePacket? {
        if failed { return nil }
        do throws(WireProblem) {
            while true {
                let available = buffer[position...]
                switch format {
                case .undecided:
                    guard let magic = available.be32(0) else { return nil }
                    if magic == 0x0A0D_0D0A {
                        format = .pcapng(PcapngFormat())
                    } else if let pcap = PcapFormat(magic: magic) {
                        format = .pcap(pcap)
                    } else {
                        throw WireProblem(
                            "not a pcap or pcapng capture (it starts with \(hex(available.prefix(4)))); write it with tcpdump -w or save it from Wireshark as pcap or pcapng"
                        )
                    }
                case var .pcap(pcap):
                    let step = try pcap.read(available)
                    format = .pcap(pcap)
                    guard let step else { return nil }
                    position += step.used
                    if let packet = step.packet { return packet }
                case var .pcapng(pcapng):
                    let step = try pcapng.read(available)
                    format = .pcapng(pcapng)
                    guard let step else { return nil }
                    position += step.used
                    if let packet = step.packet { return packet }
                }
            }
        } catch {
            failed = true
            throw WireProblem("\(error.message) (at byte \(consumed + position) of the file)")
        }
    }

    /// At the end of the file: a problem when it stops inside a header, block or record.
    public func finish() -> WireProblem? {
        if failed { return nil }
        let left = buffer.count - position
        if case .undecided = format { return WireProblem("the file is empty or shorter than a capture header") }
        guard left > 0 else { return nil }
        return WireProblem(
            "the file ends inside a packet record (\(left) bytes left over at byte \(consumed + position)); the capture was cut short, everything before was read"
        )
    }
}

/// One step of a format reader: the bytes it used and the packet they held, if any.
struct ReadStep {
    var used: Int
    var packet: WirePacket?
}

/// Bytes written as `0a 0d 0d 0a` for problems.
func hex(_ bytes: some Collection<UInt8>) -> String {
    bytes.map { byte in
        let digits = String(byte, radix: 16)
        return digits.count == 1 ? "0" + digits : digits
    }.joined(separator: " ")
}

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
                let network = bytes.u32(20, bigEndian: bigEndian)
            else { return nil }
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
        let packet = WirePacket(
            nanoseconds: nanos, linkType: linkType, interface: 0, data: data,
            originalLength: max(Int(original), Int(captured)))
        return ReadStep(used: 16 + Int(captured), packet: packet)
    }
}
