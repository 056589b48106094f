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
    static func plantValidate(_ text: String, hostName: String) -> PlantParseResult {
        let pieces = plantPieces(of: text)
        func reject(_ tag: PlantErrorTag, _ reason: String) -> PlantParseResult {
            let sender = plantRecover("sender", from: pieces)
            return .rejected(PlantRejection(
                tag: tag, reason: reason,
                sender: sender == hostName ? nil : sender,
                id: plantRecover("ID", from: pieces),
                operation: plantRecover("operation", from: pieces),
                original: text
            ))
        }

        // The value of each required key, by its position in `requiredKeys`; other keys are
        // collected only to count them (rules 2 and 3).
        var values = [Substring?](repeating: nil, count: requiredKeys.count)
        var otherKeys: Set<Substring> = []
        for piece in pieces {
            let parts = split(piece, at: 0x3A, maxSplits: 2)
            if parts.count > 2 { return reject(.missingKeys, "too_many_colons") }
            if parts.count < 2 { return reject(.missingVals, "missing_value") }
            if let position = requiredKeys.firstIndex(where: { $0.utf8.elementsEqual(parts[0].utf8) }) {
                values[position] = parts[1]
            } else {
                otherKeys.insert(parts[0])
            }
        }
        let distinctKeys = values.count(where: { $0 != nil }) + otherKeys.count
        guard distinctKeys == 5 else { return reject(.hashLength, "key_count") }
        guard otherKeys.isEmpty else { return reject(.missingKeys, "unknown_key") }

        var message = PlantMessage(
            id: String(values[0]!),
            sender: String(values[1]!),
            receiver: String(values[2]!),
            payload: String(values[3]!),
            operation: String(values[4]!)
        )
        if message.sender == hostName { return .ownMessage }
        message.payload = PlantPercentEncoding.decode(message.payload)
        if message.isError { return .incomingError(message) }
        guard let operation = PlantOperation(rawValue: message.operation) else {
            return reject(.invalidOpTag, "unknown_operation")
        }
        return .request(message, operation)
    }
}
