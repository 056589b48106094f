/// Cuts one direction's byte stream into MQTT control packets: a fixed header (type and flags),
/// a variable-length "remaining length", then that many bytes. Packets may span TCP segments and
/// one segment may hold several.
///
/// A stream joined mid-connection starts inside some packet; until ``synced`` the framer drops
/// each chunk (one TCP segment's new bytes) unless it starts with a whole chain of valid fixed
/// headers, and takes the first that does as the start of a packet.
struct MQTTFramer {
    /// One control packet: its fixed header and body.
    struct Frame {
        var type: UInt8
        var flags: UInt8
        var body: ArraySlice<UInt8>
    }

    private var buffer: [UInt8] = []
    private var start = 0
    private(set) var synced: Bool
    /// Bytes dropped while looking for the first whole packet.
    private(set) var skipped = 0

    init(synced: Bool) {
        self.synced = synced
    }

    /// Adds the next chunk of the stream.
    mutating func append(_ chunk: ArraySlice<UInt8>) {
        if !synced {
            guard Self.startsWithPackets(chunk) else {
                skipped += chunk.count
                return
            }
            synced = true
        }
        if start > 0 && start >= buffer.count / 2 {
            buffer.removeFirst(start)
            start = 0
        }
        buffer.append(contentsOf: chunk)
    }

    /// The next whole packet, nil when more bytes are needed; throws when the bytes cannot be MQTT.
    mutating func next() throws(WireProblem) -> Frame? {
        let available = buffer[start...]
        guard let header = try Self.header(available) else { return nil }
        guard let body = available.bytes(header.size, header.length) else { return nil }
        start += header.size + header.length
        return Frame(type: header.type, flags: header.flags, body: body)
    }

    /// The fixed header at the start of `bytes`: nil when incomplete, a problem when invalid.
    static func header(_ bytes: ArraySlice<UInt8>) throws(WireProblem) -> (
        type: UInt8, flags: UInt8, length: Int, size: Int
    )? {
        guard let first = bytes.u8(0) else { return nil }
        let type = first >> 4, flags = first & 0x0F
        guard validFlags(type: type, flags: flags) else {
            throw WireProblem("the byte \(hex([first])) does not start an MQTT packet (type \(type), flags \(flags))")
        }
        var length = 0
        for index in 1...4 {
            guard let byte = bytes.u8(index) else { return nil }
            length |= Int(byte & 0x7F) << (7 * (index - 1))
            if byte & 0x80 == 0 { return (type, flags, length, index + 1) }
        }
        throw WireProblem("an MQTT packet's remaining length runs over four bytes")
    }

    /// The flags MQTT allows with each packet type (3.1.1 and 5: PUBLISH any but QoS 3; PUBREL,
    /// SUBSCRIBE and UNSUBSCRIBE 0010; the rest 0000; 15 is v5's AUTH).
    static func validFlags(type: UInt8, flags: UInt8) -> Bool {
        switch type {
        case 0: false
        case 3: (flags >> 1) & 3 != 3
        case 6, 8, 10: flags == 2
        default: flags == 0
        }
    }

    /// True when `chunk` starts with valid packets back to back, ending at its end or inside the last.
    static func startsWithPackets(_ chunk: ArraySlice<UInt8>) -> Bool {
        var rest = chunk
        while !rest.isEmpty {
            let parsed: (type: UInt8, flags: UInt8, length: Int, size: Int)?
            do {
                parsed = try header(rest)
            } catch {
                return false
            }
            guard let header = parsed else { return true } // a header cut by the chunk's end
            if header.type == 3 && header.length < 2 { return false }
            let size = header.size + header.length
            if size >= rest.count { return true }
            rest = rest.dropFirst(size)
        }
        return true
    }
}
