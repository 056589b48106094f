/// One plant-tracker message: `ID:…;sender:…;receiver:…;payload:…;operation:…`.
///
/// All five fields are plain text. In a parsed request, ``payload`` has already been
/// percent-decoded; ``encoded()`` writes the message back to the wire, percent-encoding
/// `%`, `;` and `:` in the payload so the result always has exactly five fields and the
/// payload survives the round trip losslessly.
public struct PlantMessage: Sendable, Equatable, Hashable {
    /// The message ID; clients use it to match responses to requests. Not interpreted by Trellis.
    public var id: String
    /// The name of the client (or host) that sent the message.
    public var sender: String
    /// The name of the intended receiver; clients keep only messages addressed to them.
    public var receiver: String
    /// The payload, in decoded (plain) form.
    public var payload: String
    /// The operation tag: `REQ_…`, `RES_…` or `ERR_…`.
    public var operation: String

    /// Creates a message from its five fields; `payload` is the decoded (plain) text.
    public init(id: String, sender: String, receiver: String, payload: String, operation: String) {
        (self.id, self.sender, self.receiver, self.payload) = (id, sender, receiver, payload)
        self.operation = operation
    }

    /// The wire form of the message, with the payload percent-encoded (see ``PlantPercentEncoding``).
    public func encoded() -> String {
        "ID:\(id);sender:\(sender);receiver:\(receiver);payload:\(PlantPercentEncoding.encode(payload));operation:\(operation)"
    }

    /// The wire form as UTF-8 bytes, ready to publish, written straight into one buffer.
    public func encodedBytes() -> [UInt8] {
        Self.wire(
            id: id, sender: sender, receiver: receiver, operation: operation,
            payloadSize: payload.utf8.count
        ) { PlantPercentEncoding.append(payload, to: &$0) }
    }

    /// The wire form of a message from its fields, the payload written by `appendPayload`
    /// (already percent-encoded) in its place.
    static func wire(
        id: String, sender: String, receiver: String, operation: String, payloadSize: Int,
        appendPayload: (inout [UInt8]) -> Void
    ) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(
            64 + id.utf8.count + sender.utf8.count + receiver.utf8.count + payloadSize + operation.utf8.count)
        append("ID:", to: &out)
        append(id, to: &out)
        append(";sender:", to: &out)
        append(sender, to: &out)
        append(";receiver:", to: &out)
        append(receiver, to: &out)
        append(";payload:", to: &out)
        appendPayload(&out)
        append(";operation:", to: &out)
        append(operation, to: &out)
        return out
    }

    /// The wire form of a message whose payload is bytes ready to send (a reply's rendered payload):
    /// one buffer of the exact size, each piece copied into place, where appending piece by piece
    /// checks the array's room and uniqueness at every piece.
    static func wire(id: String, sender: String, receiver: String, operation: String, payload: [UInt8]) -> [UInt8] {
        // The keys are literals, not an array of them: an array would be allocated on every reply.
        let keys: (StaticString, StaticString, StaticString, StaticString, StaticString) =
            ("ID:", ";sender:", ";receiver:", ";payload:", ";operation:")
        let size =
            keys.0.utf8CodeUnitCount + keys.1.utf8CodeUnitCount + keys.2.utf8CodeUnitCount
            + keys.3.utf8CodeUnitCount + keys.4.utf8CodeUnitCount
            + id.utf8.count + sender.utf8.count + receiver.utf8.count + payload.count + operation.utf8.count
        // Written in a scratch buffer and copied once: the array made from a buffer is allocated by
        // code specialized for bytes, where `init(unsafeUninitializedCapacity:)` goes through the
        // standard library's generic path and looks up the storage's type metadata on every reply.
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: size) { buffer in
            var out = WireWriter(base: buffer.baseAddress!)
            out.put(keys.0); out.put(id)
            out.put(keys.1); out.put(sender)
            out.put(keys.2); out.put(receiver)
            out.put(keys.3); payload.withUnsafeBufferPointer { out.put($0) }
            out.put(keys.4); out.put(operation)
            return [UInt8](UnsafeBufferPointer(rebasing: buffer[..<out.offset]))
        }
    }

    /// Appends the UTF-8 bytes of `text` as one copy of its buffer, where appending its UTF-8 view
    /// goes through the generic path for any sequence.
    private static func append(_ text: String, to out: inout [UInt8]) {
        var text = text
        text.withUTF8 { out.append(contentsOf: $0) }
    }

    /// The wire form with the payload shortened to `limit` characters (plus `…`), for log lines:
    /// payloads may be large and logs should stay readable and bounded.
    public func logSummary(limit: Int = 120) -> String {
        var shortened = self
        if payload.count > limit {
            shortened.payload = String(payload.prefix(limit)) + "…"
        }
        return shortened.encoded()
    }

    /// True for a `REQ_` operation (known or not).
    public var isRequest: Bool { operation.hasPrefix("REQ_") }

    /// True for a `RES_` operation.
    public var isResponse: Bool { operation.hasPrefix("RES_") }

    /// True for an `ERR_` operation.
    public var isError: Bool { operation.hasPrefix("ERR_") }
}

extension PlantMessage: CustomStringConvertible {
    /// The wire form, so messages read naturally in logs and test failures.
    public var description: String { encoded() }
}

/// Copies a message's pieces one after another into a buffer of the right size (``PlantMessage/wire(id:sender:receiver:operation:payload:)``).
private struct WireWriter {
    let base: UnsafeMutablePointer<UInt8>
    var offset = 0

    mutating func put(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let start = bytes.baseAddress, !bytes.isEmpty else { return }
        (base + offset).update(from: start, count: bytes.count)
        offset += bytes.count
    }

    mutating func put(_ text: StaticString) {
        put(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    mutating func put(_ text: String) {
        // A native string lends its bytes without a copy; only a bridged one is copied first.
        if text.utf8.withContiguousStorageIfAvailable({ put($0) }) == nil {
            var text = text
            text.withUTF8 { put($0) }
        }
    }
}
