extension PlantProtocol {
    /// The five keys every message must carry, case-sensitive, in the order of ``PlantMessage``'s fields.
    static let requiredKeys: [Substring] = ["ID", "sender", "receiver", "payload", "operation"]

    /// Splits a message into its `;`-separated pieces, dropping one empty trailing piece so that
    /// `…;operation:REQ_x;` is accepted like `…;operation:REQ_x`.
    ///
    /// The split is made on the byte `;` itself, as the original host split its strings, and runs
    /// over UTF-8 rather than over characters, which is several times faster.
    static func plantPieces(of text: String) -> [Substring] {
        var pieces = split(Substring(text), at: 0x3B, maxSplits: .max)
        if pieces.count > 0, pieces[pieces.count - 1].isEmpty {
            pieces.removeLast()
        }
        return pieces
    }

    /// `text` cut at each `separator` byte (an ASCII character, so every cut falls between two
    /// Unicode scalars), at most `maxSplits` times.
    static func split(_ text: Substring, at separator: UInt8, maxSplits: Int) -> [Substring] {
        var parts: [Substring] = []
        let utf8 = text.utf8
        var start = utf8.startIndex
        var index = start
        while index < utf8.endIndex {
            if utf8[index] == separator && parts.count < maxSplits {
                parts.append(Substring(text.unicodeScalars[start..<index]))
                start = utf8.index(after: index)
            }
            index = utf8.index(after: index)
        }
        parts.append(Substring(text.unicodeScalars[start..<utf8.endIndex]))
        return parts
    }

    /// The value of the first piece whose key is `key`, if it is non-empty and has no further `:`;
    /// pieces are cut on the byte `:` as ``plantValidate(_:hostName:)`` cuts them.
    static func plantRecover(_ key: String, from pieces: [Substring]) -> String? {
        for piece in pieces {
            let parts = split(piece, at: 0x3A, maxSplits: 2)
            guard parts.count >= 2, parts[0].utf8.elementsEqual(key.utf8) else { continue }
            return parts.count == 2 && !parts[1].isEmpty ? String(parts[1]) : nil
        }
        return nil
    }

    /// Runs validation steps 1–6 on text already known to be UTF-8.
    ///
    /// The message is cut on its UTF-8 bytes in place: only the five values become strings, and
    /// a rejection recovers its sender, ID and operation from the same cut (``plantRecover(_:from:)``).
    static func plantValidate(_ text: String, hostName: String) -> PlantParseResult {
        var text = text
        let values: [String]
        switch text.withUTF8({ PlantFields.cut($0) }) {
        case let .failure(reason): return rejection(of: text, hostName: hostName, reason)
        case let .success(found): values = found
        }
        var message = PlantMessage(id: values[0], sender: values[1], receiver: values[2], payload: values[3], operation: values[4])
        if message.sender == hostName { return .ownMessage }
        message.payload = PlantPercentEncoding.decode(message.payload)
        if message.isError { return .incomingError(message) }
        guard let operation = PlantOperation(rawValue: message.operation) else {
            return rejection(of: text, hostName: hostName, .unknownOperation)
        }
        return .request(message, operation)
    }

    /// The rejection of `text` for `reason`, with what can be recovered of its sender, ID and operation.
    private static func rejection(of text: String, hostName: String, _ reason: PlantFields.Failure) -> PlantParseResult {
        let pieces = plantPieces(of: text)
        let sender = plantRecover("sender", from: pieces)
        return .rejected(PlantRejection(
            tag: reason.tag, reason: reason.rawValue,
            sender: sender == hostName ? nil : sender,
            id: plantRecover("ID", from: pieces),
            operation: plantRecover("operation", from: pieces),
            original: text
        ))
    }
}

/// Rules 1–3 of ``PlantProtocol``'s validation, run over a message's UTF-8 bytes.
enum PlantFields {
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

    /// The values of the five required keys, in the order of ``PlantProtocol/requiredKeys``.
    ///
    /// Pieces are cut on the byte `;` (one empty trailing piece is dropped) and each piece on the
    /// byte `:`. Both are ASCII, so every cut of valid UTF-8 falls between two scalars and each
    /// value decodes to exactly the scalars between its separators.
    static func cut(_ bytes: UnsafeBufferPointer<UInt8>) -> Result<[String], Failure> {
        var values: [Range<Int>?] = [nil, nil, nil, nil, nil]
        var otherKeys: Set<String> = []
        if let last = bytes.last {
            let end = last == semicolon ? bytes.count - 1 : bytes.count
            var start = 0
            while true {
                var stop = start
                while stop < end && bytes[stop] != semicolon { stop += 1 }
                guard let colon = firstColon(bytes, start, stop) else { return .failure(.missingValue) }
                if firstColon(bytes, colon + 1, stop) != nil { return .failure(.tooManyColons) }
                if let position = keyPosition(bytes, start, colon) {
                    values[position] = (colon + 1)..<stop
                } else {
                    otherKeys.insert(String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<colon]), as: UTF8.self))
                }
                if stop == end { break }
                start = stop + 1
            }
        }
        let distinct = values.count(where: { $0 != nil }) + otherKeys.count
        guard distinct == 5 else { return .failure(.keyCount) }
        guard otherKeys.isEmpty else { return .failure(.unknownKey) }
        return .success(values.map { String(decoding: UnsafeBufferPointer(rebasing: bytes[$0!]), as: UTF8.self) })
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

    /// The position in ``PlantProtocol/requiredKeys`` of the key in `bytes[from..<to]`, matched byte for byte.
    private static func keyPosition(_ bytes: UnsafeBufferPointer<UInt8>, _ from: Int, _ to: Int) -> Int? {
        let key = UnsafeBufferPointer(rebasing: bytes[from..<to])
        return keys.firstIndex { $0.elementsEqual(key) }
    }
}
