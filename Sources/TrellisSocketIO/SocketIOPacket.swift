import TrellisCore

/// The Socket.IO packet types; the digit follows the Engine.IO `message` type (`42…` is an event).
public enum SocketIOPacketType: UInt8, Sendable, CaseIterable {
    case connect = 0, disconnect, event, ack
    /// `error` in Socket.IO 4, `connect_error` in Socket.IO 5.
    case connectError
    case binaryEvent, binaryAck
}

/// One Socket.IO packet as it travels in an Engine.IO `message`:
/// `<type>[<attachments>-][<namespace>,][<ack id>][<JSON data>]`.
public struct SocketIOPacket: Sendable, Equatable {
    public var type: SocketIOPacketType
    /// The namespace, `/` when the packet names none.
    public var namespace: String
    public var ackID: Int?
    /// Binary attachments announced by a binary event or acknowledgement.
    public var attachments: Int
    /// The JSON text of the data, empty when there is none.
    public var data: String

    public init(
        type: SocketIOPacketType, namespace: String = "/", ackID: Int? = nil, attachments: Int = 0, data: String = ""
    ) {
        (self.type, self.namespace, self.ackID, self.attachments) = (type, namespace, ackID, attachments)
        self.data = data
    }

    /// The text of the packet.
    public var encoded: String {
        var out = String(Character(Unicode.Scalar(0x30 + type.rawValue)))
        if type == .binaryEvent || type == .binaryAck { out += "\(attachments)-" }
        // The default namespace is written out only when data starting with `/` would read as one.
        if namespace != "/" || ackID == nil && data.unicodeScalars.first == "/" { out += namespace + "," }
        if let ackID { out += String(ackID) }
        return out + data
    }

    /// An event packet: `2["name",arg…]`, each argument given as JSON text.
    public static func event(_ name: String, argumentsJSON: [String], namespace: String = "/") -> SocketIOPacket {
        SocketIOPacket(
            type: .event, namespace: namespace,
            data: "[" + ([JSONText.string(name)] + argumentsJSON).joined(separator: ",") + "]")
    }

    /// Parses the text of an Engine.IO message as a Socket.IO packet. The data is checked to be
    /// JSON only by ``event()``, which the server calls for the packets it acts on.
    public static func decode(_ text: String) -> Result<SocketIOPacket, SocketIOError> {
        // Read by Unicode scalars: a combining mark after a digit or a comma must not hide it.
        var rest = Substring(text).unicodeScalars
        guard let first = rest.first, first.isASCII, first.value >= 0x30,
            let type = SocketIOPacketType(rawValue: UInt8(first.value - 0x30))
        else {
            return .failure(.unknownPacketType)
        }
        rest = rest.dropFirst()
        var packet = SocketIOPacket(type: type)
        if type == .binaryEvent || type == .binaryAck {
            guard let dash = rest.firstIndex(of: "-"), let count = Int(Substring(rest[..<dash])), count >= 0,
                count <= 1000
            else {
                return .failure(.invalidAttachments)
            }
            packet.attachments = count
            rest = rest[rest.index(after: dash)...]
        }
        if rest.first == "/" {
            let end = rest.firstIndex(of: ",") ?? rest.endIndex
            packet.namespace = String(Substring(rest[..<end]))
            rest = end == rest.endIndex ? rest[end...] : rest[rest.index(after: end)...]
            guard packet.namespace.utf8.count <= 256 else { return .failure(.invalidNamespace) }
        }
        let digits = rest.prefix { ("0"..."9").contains($0) }
        if !digits.isEmpty {
            guard digits.count <= 15, let id = Int(Substring(digits)) else { return .failure(.invalidAckID) }
            packet.ackID = id
            rest = rest.dropFirst(digits.count)
        }
        packet.data = String(Substring(rest))
        return .success(packet)
    }

    /// The name and arguments of an event packet, or why it is not a valid one. The data comes
    /// from the peer, so it is parsed with the nesting limit of ``JSONValue/parse(_:maximumDepth:)``.
    public func event() -> Result<(name: String, arguments: [JSONValue]), SocketIOError> {
        guard type == .event else { return .failure(.notAnEvent) }
        guard case let .array(items)? = JSONValue.parse(data) else { return .failure(.invalidEventData) }
        guard case let .string(name)? = items.first else { return .failure(.invalidEventData) }
        return .success((name, Array(items.dropFirst())))
    }
}

/// Why an Engine.IO message is not a usable Socket.IO packet; the raw value labels the metric.
public enum SocketIOError: String, Error, Sendable, Equatable, CaseIterable {
    case unknownPacketType = "unknown_socketio_type"
    case invalidAttachments = "invalid_attachments"
    case invalidNamespace = "invalid_namespace"
    case invalidAckID = "invalid_ack_id"
    case notAnEvent = "not_an_event"
    case invalidEventData = "invalid_event_data"
}
