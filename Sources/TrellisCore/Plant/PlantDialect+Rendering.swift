extension PlantDialect {
    /// Writes a request's result as the payloads of its answers.
    ///
    /// ``lossless``: one answer, JSON (``PlantPayloads``) or the count or name as text.
    /// ``original``: the released app's forms (``OriginalPayloads``): one `RES_plantInfoOnStartup`
    /// per plant, one `RES_plantSensorData` per sensor that has reported (the app cannot take a
    /// missing moisture; no reported sensor at all is `ERR_noPlantDataToRequest`), the count, and
    /// nothing for add, rename and delete, which the app does not expect answered.
    public func render(_ result: PlantResult) -> PlantRendering {
        switch (self, result) {
        case let (_, .count(count)):
            return .payloads([PlantPayloads.numPlants(count)])
        case let (.lossless, .plants(plants)):
            return .payloads([PlantPayloads.plantInfo(plants)])
        case let (.lossless, .sensorRecords(records)):
            return .payloads([PlantPayloads.sensorData(records)])
        case let (.lossless, .added(name)), let (.lossless, .deleted(name)), let (.lossless, .renamed(name)):
            return .payloads([name])
        case let (.original, .plants(plants)):
            return plants.isEmpty ? .error(.noPlantDataToRequest) : .payloads(plants.map(OriginalPayloads.plantInfo))
        case let (.original, .sensorRecords(records)):
            let payloads = records.compactMap(OriginalPayloads.sensorRecord)
            return payloads.isEmpty ? .error(.noPlantDataToRequest) : .payloads(payloads)
        case (.original, .added), (.original, .deleted), (.original, .renamed):
            return .payloads([])
        }
    }

    /// The answer to `request` carrying `payload`: from the host to the requester, tagged
    /// `RES_<name>`; the request's ID in ``lossless``, `0` in ``original`` (as the host sent).
    public func reply(to request: PlantMessage, operation: PlantOperation, payload: String, hostName: String)
        -> PlantMessage
    {
        var reply = PlantProtocol.reply(to: request, operation: operation, payload: payload, hostName: hostName)
        if self == .original { reply.id = "0" }
        return reply
    }

    /// The error answer to a well-formed request (a tag decided after parsing). ``lossless``
    /// echoes the request, to be percent-encoded; ``original`` echoes it as the host did, with
    /// `;` written as `|` and `:` as `--`, and ID `0`.
    public func error(_ tag: PlantErrorTag, for request: PlantMessage, hostName: String) -> PlantMessage {
        var error = PlantProtocol.error(tag, for: request, hostName: hostName)
        if self == .original {
            error.id = "0"
            error.payload = Self.hostEscaped(
                "ID:\(request.id);sender:\(request.sender);receiver:\(request.receiver);payload:\(request.payload);operation:\(request.operation)"
            )
        }
        return error
    }

    /// The error answer to a rejected message with its own tag, or `nil` when it is not answered.
    public func error(for rejection: PlantRejection, hostName: String) -> PlantMessage? {
        guard let tag = rejection.tag else { return nil }
        return error(tag, for: rejection, hostName: hostName)
    }

    /// The error answer with `tag` to a rejected message (see ``PlantProtocol/error(_:for:hostName:)-(_,PlantRejection,_)``),
    /// its payload written as in ``error(_:for:hostName:)-(_,PlantMessage,_)``.
    public func error(_ tag: PlantErrorTag, for rejection: PlantRejection, hostName: String) -> PlantMessage? {
        guard var error = PlantProtocol.error(tag, for: rejection, hostName: hostName) else { return nil }
        if self == .original {
            error.id = "0"
            error.payload = Self.hostEscaped(error.payload)
        }
        return error
    }

    /// The message as this dialect puts it on the wire, or `nil` when ``original`` cannot carry it:
    /// a field that is empty or holds `;` or `:` would make the app reject it (and answer with an
    /// error of its own), so such a message is not sent.
    public func wire(_ message: PlantMessage) -> [UInt8]? {
        switch self {
        case .lossless:
            return message.encodedBytes()
        case .original:
            let fields = [message.id, message.sender, message.receiver, message.payload, message.operation]
            guard fields.allSatisfy({ !$0.isEmpty && !$0.utf8.contains(0x3B) && !$0.utf8.contains(0x3A) }) else {
                return nil
            }
            return PlantMessage.wire(
                id: message.id, sender: message.sender, receiver: message.receiver, operation: message.operation,
                payloadSize: message.payload.utf8.count
            ) { $0.append(contentsOf: message.payload.utf8) }
        }
    }

    /// The original host's escape of a message quoted in an error: `;` → `|`, `:` → `--`.
    static func hostEscaped(_ text: String) -> String {
        text.replacing(";", with: "|").replacing(":", with: "--")
    }
}
