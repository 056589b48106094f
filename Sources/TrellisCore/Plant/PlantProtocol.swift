/// The plant-tracker wire protocol: parsing requests and building replies, with no I/O.
///
/// Clients publish requests on `rpi/torpi`; Trellis publishes every reply on `rpi/fromrpi` and
/// each client keeps only messages whose `receiver` is its own name. A message is
/// `ID:<id>;sender:<name>;receiver:<name>;payload:<text>;operation:<tag>`.
///
/// Typical use by the relay:
/// ```swift
/// switch PlantProtocol.parse(bytes, hostName: host) {
/// case .request(let message, let operation):
///     let reply = PlantProtocol.replyBytes(to: message, operation: operation, payload: EncodedPlantPayload(body), hostName: host)
/// case .rejected(let rejection):
///     if let error = PlantProtocol.error(for: rejection, hostName: host) { publish(error) } else { deadLetter() }
/// case .ownMessage: break
/// case .incomingError(let message): log(message)
/// }
/// ```
///
/// Validation runs in this order and the first failure decides:
/// 1. The text is split on every `;` (one empty trailing piece is ignored), each piece on every
///    `:`. The first piece with more than one `:` gives `ERR_missingKeys`; the first with none
///    gives `ERR_missingVals`. Non-UTF-8 input is rejected with no tag (`invalid_utf8`).
/// 2. A number of distinct keys other than five gives `ERR_hashLength`. A repeated key counts
///    once and its last value wins, as in the original host's dictionary.
/// 3. Keys other than exactly `ID`, `sender`, `receiver`, `payload`, `operation` give `ERR_missingKeys`.
/// 4. A message whose `sender` is the host's name is ``PlantParseResult/ownMessage``.
/// 5. An `ERR_` operation is ``PlantParseResult/incomingError(_:)``.
/// 6. An operation that is not a ``PlantOperation`` gives `ERR_invalidOpTag`.
///
/// An empty message has no pieces and so gives `ERR_hashLength`; like any message without a
/// recoverable sender it is never answered, only dead-lettered. A well-formed message with an
/// empty `sender` value is still a request (its reply simply reaches no one).
///
/// Spam limiting (``SpamGuard``) is applied by the relay on top of this, and takes precedence over step 6.
/// Keys and values are taken verbatim (no trimming); only the payload is percent-decoded.
public enum PlantProtocol {
    /// Parses one incoming MQTT payload, as received on the request topic.
    ///
    /// The bytes are cut where they are: a message in ASCII (every message the released clients
    /// send) needs no decoding check, and only the five values become strings.
    public static func parse(_ payload: [UInt8], hostName: String) -> PlantParseResult {
        payload.withUnsafeBufferPointer { bytes in
            guard bytes.isASCII || String(validating: bytes, as: UTF8.self) != nil else {
                return .rejected(PlantRejection(tag: nil, reason: "invalid_utf8"))
            }
            return plantValidate(bytes, hostName: hostName)
        }
    }

    /// Parses one incoming message already held as text.
    public static func parse(_ text: String, hostName: String) -> PlantParseResult {
        var text = text
        return text.withUTF8 { plantValidate($0, hostName: hostName) }
    }

    /// Builds the response to `request`: same ID, from the host to the requester, tagged
    /// `RES_<name>`. `payload` is plain text; it is percent-encoded when the reply is encoded.
    public static func reply(
        to request: PlantMessage, operation: PlantOperation, payload: String, hostName: String
    ) -> PlantMessage {
        PlantMessage(
            id: request.id, sender: hostName, receiver: request.sender,
            payload: payload, operation: operation.responseTag
        )
    }

    /// The wire form of ``reply(to:operation:payload:hostName:)``, with the payload already encoded.
    public static func replyBytes(
        to request: PlantMessage, operation: PlantOperation, payload: EncodedPlantPayload, hostName: String
    ) -> [UInt8] {
        PlantMessage.wire(
            id: request.id, sender: hostName, receiver: request.sender, operation: operation.responseTag,
            payload: payload.wire)
    }

    /// Builds the error reply for a rejected message using the rejection's own tag, or `nil`
    /// when it must not be answered (see ``PlantRejection/isAnswerable``).
    public static func error(for rejection: PlantRejection, hostName: String) -> PlantMessage? {
        guard let tag = rejection.tag else { return nil }
        return error(tag, for: rejection, hostName: hostName)
    }

    /// Builds an error reply with an explicit `tag` (for example `ERR_kickedForSpam`) for a
    /// rejected message: ID is the recovered ID or `0`, the payload is the whole original message.
    /// Returns `nil` when there is no recoverable sender, the original was not UTF-8, the sender
    /// is the host, or the message was itself an `ERR_` message.
    public static func error(_ tag: PlantErrorTag, for rejection: PlantRejection, hostName: String) -> PlantMessage? {
        guard let sender = rejection.sender, sender != hostName, let original = rejection.original,
            !rejection.isIncomingError
        else { return nil }
        return PlantMessage(
            id: rejection.id ?? "0", sender: hostName, receiver: sender,
            payload: original, operation: tag.rawValue
        )
    }

    /// Builds an error reply to a well-formed request, for errors decided after parsing
    /// (spam, name taken, too many plants, …). The payload is the request in its wire form.
    public static func error(_ tag: PlantErrorTag, for request: PlantMessage, hostName: String) -> PlantMessage {
        PlantMessage(
            id: request.id, sender: hostName, receiver: request.sender,
            payload: request.encoded(), operation: tag.rawValue
        )
    }
}
