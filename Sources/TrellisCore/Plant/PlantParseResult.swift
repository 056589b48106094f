/// The outcome of ``PlantProtocol/parse(_:hostName:)`` for one incoming MQTT payload.
public enum PlantParseResult: Sendable, Equatable {
    /// A well-formed request with a known operation; the message's payload is already decoded.
    case request(PlantMessage, PlantOperation)
    /// A well-formed message whose sender is the host itself (Trellis hears its own replies); ignore it.
    case ownMessage
    /// A well-formed message carrying an `ERR_` operation from a client: log and count it, never answer.
    case incomingError(PlantMessage)
    /// A message that failed validation; see ``PlantRejection`` for the tag, reason and reply address.
    case rejected(PlantRejection)

    /// The operation of a well-formed request; nil for any other message.
    public var requestOperation: PlantOperation? {
        if case let .request(_, operation) = self { operation } else { nil }
    }

    /// The sender this message should be counted against by ``SpamGuard``, or `nil` when it must
    /// not be counted: the host's own messages, incoming errors (well-formed or not), and messages
    /// with no recoverable sender.
    public var accountableSender: String? {
        switch self {
        case .request(let message, _):
            message.sender
        case .ownMessage, .incomingError:
            nil
        case .rejected(let rejection):
            rejection.isIncomingError ? nil : rejection.sender
        }
    }
}

/// Why an incoming message was rejected, and what is known about where an error reply would go.
///
/// Rejected messages are never handed to request handlers. When ``isAnswerable`` is true the
/// relay answers with ``PlantProtocol/error(for:hostName:)``; otherwise it only dead-letters the
/// message (using ``reason``).
public struct PlantRejection: Sendable, Equatable {
    /// The protocol error to send back, or `nil` when the failure has no protocol tag
    /// (currently only `invalid_utf8`).
    public var tag: PlantErrorTag?
    /// A short, stable, snake_case reason for logs, metrics and dead letters,
    /// e.g. `too_many_colons`, `missing_value`, `key_count`, `unknown_key`, `unknown_operation`, `invalid_utf8`.
    public var reason: String
    /// The sender recovered from the first piece starting with `sender:`; `nil` when there is
    /// none, when its value is empty or contains `:`, or when it is the host's own name.
    public var sender: String?
    /// The message ID recovered from the first piece starting with `ID:`; `nil` when there is none
    /// or its value is empty or contains `:` (error replies then use `0`).
    public var id: String?
    /// The operation recovered from the first piece starting with `operation:`, if any.
    public var operation: String?
    /// The whole offending message as received; `nil` when it was not valid UTF-8.
    public var original: String?

    /// Creates a rejection; normally produced by ``PlantProtocol/parse(_:hostName:)``.
    public init(
        tag: PlantErrorTag?, reason: String, sender: String? = nil, id: String? = nil,
        operation: String? = nil, original: String? = nil
    ) {
        (self.tag, self.reason, self.sender, self.id, self.operation) = (tag, reason, sender, id, operation)
        self.original = original
    }

    /// True when the recovered operation is an `ERR_` tag: a (malformed) error from a client,
    /// which is never answered so that errors cannot bounce.
    public var isIncomingError: Bool {
        operation?.hasPrefix("ERR_") ?? false
    }

    /// True when an error reply can and should be sent: there is a tag, a recoverable sender,
    /// a UTF-8 original, and the message is not itself an error.
    public var isAnswerable: Bool {
        tag != nil && sender != nil && original != nil && !isIncomingError
    }
}
