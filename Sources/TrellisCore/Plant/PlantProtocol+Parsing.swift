#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension PlantProtocol {
    /// The five keys every message must carry, case-sensitive, in the order of ``PlantMessage``'s fields.
    static let requiredKeys = ["ID", "sender", "receiver", "payload", "operation"]

    /// Runs validation steps 1–6 on bytes already known to be UTF-8.
    ///
    /// The message is cut in place (``PlantFields``). Steps 4 to 6 read the sender and the
    /// operation as bytes, so only the five values of a message that is kept become strings, and a
    /// rejection recovers its sender, ID and operation from the same bytes.
    static func plantValidate(_ bytes: UnsafeBufferPointer<UInt8>, hostName: String) -> PlantParseResult {
        let fields: PlantFields
        switch PlantFields.cut(bytes) {
        case let .failure(reason): return rejection(of: bytes, hostName: hostName, reason)
        case let .success(found): fields = found
        }
        if fields.isFromHost(hostName) { return .ownMessage }
        if fields.isError {
            return .incomingError(fields.message())
        }
        guard let request = PlantOperation(utf8: fields.operation) else {
            return rejection(of: bytes, hostName: hostName, .unknownOperation)
        }
        return .request(fields.message(operation: request.requestTag), request)
    }

    /// The rejection of `bytes` for `reason`, with what can be recovered of its sender, ID and operation.
    private static func rejection(of bytes: UnsafeBufferPointer<UInt8>, hostName: String, _ reason: PlantFields.Failure)
        -> PlantParseResult
    {
        let sender = PlantFields.recover("sender", in: bytes)
        return .rejected(
            PlantRejection(
                tag: reason.tag, reason: reason.rawValue,
                sender: sender == hostName ? nil : sender,
                id: PlantFields.recover("ID", in: bytes), operation: PlantFields.recover("operation", in: bytes),
                original: String(decoding: bytes, as: UTF8.self)
            ))
    }
}

/// Rules 1–3 of ``PlantProtocol``'s validation, run over a message's UTF-8 bytes.
///
/// Pieces are cut on the byte `;` (one empty trailing piece is dropped, so `…;operation:REQ_x;` is
/// accepted like `…;operation:REQ_x`) and each piece on the byte `:`, as the original host split
/// its strings. Both are ASCII, so every cut of valid UTF-8 falls between two scalars and each
/// value decodes to exactly the scalars between its separators.
struct PlantFields {
    /// The message's bytes, and where each of the five values lies in them.
    let bytes: UnsafeBufferPointer<UInt8>
    let values: (id: Range<Int>, sender: Range<Int>, receiver: Range<Int>, payload: Range<Int>, operation: Range<Int>)

    var sender: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(rebasing: bytes[values.sender]) }
    var operation: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(rebasing: bytes[values.operation]) }

    /// Whether the sender is `hostName`, equal as strings are (by canonical equivalence), as the
    /// rest of the protocol compares names. Equal bytes are equal strings; two ASCII spellings that
    /// differ are different strings; only other text needs the strings' comparison.
    func isFromHost(_ hostName: String) -> Bool {
        let sender = self.sender
        if hostName.hasSameUTF8(as: sender) { return true }
        if sender.isASCII && hostName.isASCII { return false }
        return text(values.sender) == hostName
    }

    /// Whether the operation is an `ERR_` tag, by characters as ``PlantMessage/isError`` tells it:
    /// the four bytes begin it unless a combining mark after `_` makes `_` part of another character,
    /// which can follow only as a byte of 0x80 or more.
    var isError: Bool {
        let operation = self.operation
        guard operation.hasPrefix("ERR_") else { return false }
        if operation.count == 4 || operation[4] < 0x80 { return true }
        return text(values.operation).hasPrefix("ERR_")
    }

    /// The message of the five values, its payload percent-decoded (``PlantPercentEncoding``). Made
    /// in one go rather than changed after: a message changed after it is made is copied first.
    /// `operation`, when given, is the operation's own spelling (a request's tag, equal to the bytes):
    /// a constant, where a string of the bytes would be allocated for every tag over 15 bytes.
    func message(operation: String? = nil) -> PlantMessage {
        let payload = text(values.payload)
        return PlantMessage(
            id: text(values.id), sender: text(values.sender), receiver: text(values.receiver),
            payload: hasEscape(values.payload) ? PlantPercentEncoding.decode(payload) : payload,
            operation: operation ?? text(values.operation))
    }

    /// Whether the value in `range` holds a `%`, searched in the bytes at hand: most payloads have
    /// none, and their string is then taken as it is.
    private func hasEscape(_ range: Range<Int>) -> Bool {
        guard !range.isEmpty, let base = bytes.baseAddress else { return false }
        return memchr(base + range.lowerBound, 0x25, range.count) != nil
    }

    /// The value in `range` as a string. The bytes are valid UTF-8 (checked before the cut, and
    /// every cut falls between two scalars), so none needs repairing: copied into the string's own
    /// storage, they are only checked, where decoding checks and would repair.
    private func text(_ range: Range<Int>) -> String {
        let value = UnsafeBufferPointer(rebasing: bytes[range])
        return String(unsafeUninitializedCapacity: value.count) { $0.initialize(fromContentsOf: value) }
    }

    /// Why the fields could not be cut, in the order the rules are checked.
    enum Failure: String, Error {
        case tooManyColons = "too_many_colons"
        case missingValue = "missing_value"
        case keyCount = "key_count"
        case unknownKey = "unknown_key"
        case unknownOperation = "unknown_operation"

        var tag: PlantErrorTag {
            switch self {
            case .tooManyColons, .unknownKey: .missingKeys
            case .missingValue: .missingVals
            case .keyCount: .hashLength
            case .unknownOperation: .invalidOpTag
            }
        }
    }

    /// Where the values of the five required keys lie; the first piece with no `:` or with more
    /// than one decides the failure. A repeated key's last value wins.
    static func cut(_ bytes: UnsafeBufferPointer<UInt8>) -> Result<PlantFields, Failure> {
        var id, sender, receiver, payload, operation: Range<Int>?
        var otherKeys: Set<String> = []
        // Each piece's end and its colons are found with memchr, which scans many bytes at a time.
        if let base = bytes.baseAddress, let last = bytes.last {
            let end = last == semicolon ? bytes.count - 1 : bytes.count
            var start = 0
            while true {
                let stop = offset(of: semicolon, in: base, from: start, to: end) ?? end
                guard let colon = offset(of: Self.colon, in: base, from: start, to: stop) else {
                    return .failure(.missingValue)
                }
                guard offset(of: Self.colon, in: base, from: colon + 1, to: stop) == nil else {
                    return .failure(.tooManyColons)
                }
                let key = UnsafeBufferPointer(rebasing: bytes[start..<colon])
                let value = (colon + 1)..<stop
                switch keyPosition(key) {
                case 0: id = value
                case 1: sender = value
                case 2: receiver = value
                case 3: payload = value
                case 4: operation = value
                default: otherKeys.insert(String(decoding: key, as: UTF8.self))
                }
                guard stop < end else { break }
                start = stop + 1
            }
        }
        guard let id, let sender, let receiver, let payload, let operation, otherKeys.isEmpty else {
            let known = [id, sender, receiver, payload, operation] as [Range<Int>?]
            let distinct = known.count(where: { $0 != nil }) + otherKeys.count
            return .failure(distinct == 5 ? .unknownKey : .keyCount)
        }
        return .success(PlantFields(bytes: bytes, values: (id, sender, receiver, payload, operation)))
    }

    /// The offset of the first `byte` in `base[from..<to]`, if there is one.
    private static func offset(of byte: UInt8, in base: UnsafePointer<UInt8>, from: Int, to: Int) -> Int? {
        guard from < to, let found = memchr(base + from, Int32(byte), to - from) else { return nil }
        return UnsafeRawPointer(base).distance(to: UnsafeRawPointer(found))
    }

    /// The position of `key` in ``PlantProtocol/requiredKeys``, or -1 when it is none of them: told
    /// apart by length first, as the five have five lengths.
    private static func keyPosition(_ key: UnsafeBufferPointer<UInt8>) -> Int {
        let position =
            switch key.count {
            case 2: 0 // ID
            case 6: 1 // sender
            case 8: 2 // receiver
            case 7: 3 // payload
            case 9: 4 // operation
            default: -1
            }
        guard position >= 0 else { return -1 }
        return keys[position].withUnsafeBufferPointer { $0.sameBytes(as: key) } ? position : -1
    }

    /// The value of the first piece whose key is `key`, if that piece has exactly one `:` and a
    /// non-empty value: what an error reply can be addressed with when the message is malformed.
    static func recover(_ key: String, in bytes: UnsafeBufferPointer<UInt8>) -> String? {
        var found: String?
        forEachPiece(of: bytes) { start, stop in
            guard let colon = firstColon(bytes, start, stop),
                UnsafeBufferPointer(rebasing: bytes[start..<colon]).elementsEqual(key.utf8)
            else { return true }
            if colon + 1 < stop && firstColon(bytes, colon + 1, stop) == nil {
                found = String(decoding: UnsafeBufferPointer(rebasing: bytes[(colon + 1)..<stop]), as: UTF8.self)
            }
            return false
        }
        return found
    }

    /// Calls `body` with the bounds of each piece, in order, until it returns false. An empty
    /// message has no pieces.
    private static func forEachPiece(of bytes: UnsafeBufferPointer<UInt8>, _ body: (Int, Int) -> Bool) {
        guard let last = bytes.last else { return }
        let end = last == semicolon ? bytes.count - 1 : bytes.count
        var start = 0
        while true {
            var stop = start
            while stop < end && bytes[stop] != semicolon { stop += 1 }
            guard body(start, stop), stop < end else { return }
            start = stop + 1
        }
    }

    private static let semicolon: UInt8 = 0x3B
    private static let colon: UInt8 = 0x3A
    private static let keys: [[UInt8]] = PlantProtocol.requiredKeys.map { Array($0.utf8) }

    private static func firstColon(_ bytes: UnsafeBufferPointer<UInt8>, _ from: Int, _ to: Int) -> Int? {
        var index = from
        while index < to {
            if bytes[index] == colon { return index }
            index += 1
        }
        return nil
    }
}
