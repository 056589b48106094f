extension PlantProtocol {
    /// The five keys every message must carry, case-sensitive.
    static let requiredKeys: Set<Substring> = ["ID", "sender", "receiver", "payload", "operation"]

    /// Splits a message into its `;`-separated pieces, dropping one empty trailing piece so that
    /// `…;operation:REQ_x;` is accepted like `…;operation:REQ_x`.
    static func plantPieces(of text: String) -> [Substring] {
        var pieces = text.split(separator: ";", omittingEmptySubsequences: false)
        if pieces.count > 0, pieces[pieces.count - 1].isEmpty {
            pieces.removeLast()
        }
        return pieces
    }

    /// The value of the first piece starting with `key:`, if it is non-empty and has no further `:`.
    static func plantRecover(_ key: String, from pieces: [Substring]) -> String? {
        let prefix = key + ":"
        guard let piece = pieces.first(where: { $0.hasPrefix(prefix) }) else { return nil }
        let value = piece.dropFirst(prefix.count)
        guard !value.isEmpty, !value.contains(":") else { return nil }
        return String(value)
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

        var fields: [Substring: Substring] = [:]
        for piece in pieces {
            let parts = piece.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            if parts.count > 2 { return reject(.missingKeys, "too_many_colons") }
            if parts.count < 2 { return reject(.missingVals, "missing_value") }
            fields[parts[0]] = parts[1]
        }
        guard fields.count == 5 else { return reject(.hashLength, "key_count") }
        guard Set(fields.keys) == requiredKeys else { return reject(.missingKeys, "unknown_key") }

        var message = PlantMessage(
            id: String(fields["ID"]!),
            sender: String(fields["sender"]!),
            receiver: String(fields["receiver"]!),
            payload: String(fields["payload"]!),
            operation: String(fields["operation"]!)
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
