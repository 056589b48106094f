import Foundation

/// A line of Mosquitto's password file, `name:hash`, as `mosquitto_passwd` writes it.
///
/// Mosquitto 2 hashes with PBKDF2-SHA512 and writes `$7$ITERATIONS$SALT$HASH`, salt and hash in
/// base64: exactly the `iterations`, `salt` and `password` fields a client has in the dynamic
/// security plugin's configuration, so an account moves to the plugin with its password. The
/// older `$6$` form (one round of SHA-512, Mosquitto 1.x) has no such field and cannot move.
public struct MosquittoPasswordEntry: Sendable, Equatable {
    public var username: String
    /// The whole hash field, as written.
    public var hash: String

    public init(username: String, hash: String) {
        self.username = username
        self.hash = hash
    }

    /// The PBKDF2-SHA512 parameters of a `$7$` hash; nil for another form.
    public var pbkdf2: PBKDF2Hash? {
        let fields = hash.split(separator: "$", omittingEmptySubsequences: false)
        guard fields.count == 5, fields[0].isEmpty, fields[1] == "7", let iterations = Int(fields[2]), iterations > 0,
            !fields[3].isEmpty, !fields[4].isEmpty
        else { return nil }
        return PBKDF2Hash(iterations: iterations, salt: String(fields[3]), hash: String(fields[4]))
    }

    /// The entries of a password file's text, in order; blank lines and `#` comments are skipped.
    public static func parse(_ text: String) -> [MosquittoPasswordEntry] {
        text.split(whereSeparator: \.isNewline).compactMap { line in
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            guard !trimmed.isEmpty, !trimmed.hasPrefix("#"), let colon = trimmed.firstIndex(of: ":") else { return nil }
            return MosquittoPasswordEntry(
                username: String(trimmed[..<colon]),
                hash: String(trimmed[trimmed.index(after: colon)...]))
        }
    }
}

/// A PBKDF2-SHA512 password hash: its iteration count, and salt and hash in base64.
public struct PBKDF2Hash: Sendable, Equatable {
    public var iterations: Int
    public var salt: String
    public var hash: String

    public init(iterations: Int, salt: String, hash: String) {
        (self.iterations, self.salt, self.hash) = (iterations, salt, hash)
    }
}
