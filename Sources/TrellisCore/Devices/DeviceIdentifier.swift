/// Device ids: 1–64 characters of `A–Z`, `a–z`, `0–9`, `.`, `_` and `-`, so an id is always one
/// plain topic level.
public enum DeviceIdentifier {
    /// The longest id accepted.
    public static let maximumLength = 64

    /// Whether `text` is a valid device id.
    public static func isValid(_ text: String) -> Bool {
        let bytes = text.utf8
        guard !bytes.isEmpty, bytes.count <= maximumLength else { return false }
        return bytes.allSatisfy { byte in
            (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte)
                || byte == 0x2E || byte == 0x5F || byte == 0x2D
        }
    }

    /// The sentence refusing an invalid id given as `member`.
    public static func refusal(_ member: String) -> JSONServiceError {
        .invalid(member, "a device id: 1 to 64 characters of A-Z, a-z, 0-9, '.', '_' or '-'")
    }

    /// A required device-id member of a request.
    public static func member(_ member: String, of request: JSONRequest) -> Result<String, JSONServiceError> {
        switch request.string(member) {
        case let .failure(error): .failure(error)
        case let .success(id): isValid(id) ? .success(id) : .failure(refusal(member))
        }
    }
}

/// Names of devices and models: 1–64 characters, no control characters, no space at either end.
public enum FleetName {
    /// The longest name accepted, in characters.
    public static let maximumLength = 64

    /// The name in `member`, validated.
    public static func validate(_ text: String, member: String) -> Result<String, JSONServiceError> {
        if text.isEmpty || text.count > maximumLength {
            return .failure(.invalid(member, "1 to \(maximumLength) characters"))
        }
        if text.unicodeScalars.contains(where: { $0.value < 0x20 || (0x7f...0x9f).contains($0.value) }) {
            return .failure(.invalid(member, "free of control characters"))
        }
        if text.first == " " || text.last == " " {
            return .failure(.invalid(member, "without spaces at either end"))
        }
        return .success(text)
    }
}
