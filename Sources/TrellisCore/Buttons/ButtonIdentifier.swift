/// Why a button or client id was refused, as a sentence for the `error` member of a reply.
public struct IdentifierError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public var description: String { message }

    public init(message: String) {
        self.message = message
    }
}

/// The rules for button and client ids: 1–64 characters of valid UTF-8, none of them `/`,
/// `+`, `#` (they could not be one topic level) or a control character, and no space at either end
/// (a payload is trimmed, so such an id could be pressed but never registered for).
public enum ButtonIdentifier {
    /// The longest id accepted, in characters.
    public static let maximumLength = 64

    /// Validates raw payload bytes as an id (surrounding whitespace trimmed).
    public static func validate(_ raw: [UInt8], kind: String = "button id") -> Result<String, IdentifierError> {
        guard let text = String(validating: raw, as: UTF8.self) else {
            return .failure(IdentifierError(message: "the \(kind) is not valid UTF-8 text"))
        }
        return validate(text.trimmingWhitespace(), kind: kind)
    }

    /// Validates an id taken from a topic level or a payload.
    public static func validate(_ text: String, kind: String = "button id") -> Result<String, IdentifierError> {
        if text.isEmpty {
            return .failure(IdentifierError(message: "the \(kind) is empty"))
        }
        if text.count > maximumLength {
            return .failure(
                IdentifierError(
                    message: "the \(kind) has \(text.count) characters; at most \(maximumLength) are allowed"))
        }
        if let bad = text.unicodeScalars.first(where: { "/+#".unicodeScalars.contains($0) }) {
            return .failure(
                IdentifierError(message: "the \(kind) contains '\(bad)', which cannot be part of an MQTT topic level"))
        }
        if text.unicodeScalars.contains(where: { $0.value < 0x20 || (0x7f...0x9f).contains($0.value) }) {
            return .failure(IdentifierError(message: "the \(kind) contains a control character"))
        }
        if text.first == " " || text.last == " " {
            return .failure(IdentifierError(message: "the \(kind) starts or ends with a space"))
        }
        return .success(text)
    }
}

extension String {
    /// The string without leading and trailing spaces, tabs and line breaks (`\r\n` is one
    /// `Character`, so it is named as well).
    func trimmingWhitespace() -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" || $0 == "\r\n" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        return String(self[first...last])
    }
}
