import Crypto
import Foundation
import TrellisBroker

/// Mosquitto 2's `$7$` password hash, made and checked here: PBKDF2-HMAC-SHA512 (RFC 8018) of the
/// password's UTF-8 bytes, a 12-byte random salt and 101 iterations — what `mosquitto_passwd` of
/// Mosquitto 2.0 writes, and a form every Mosquitto 2 broker and its dynamic security plugin read.
///
/// Trellis hashes itself rather than through `mosquitto_passwd -U` (which hashes a file of
/// `name:password` lines): that tool cuts a password at its first `:` and trims the blanks at its end,
/// so `pa:ss` would be stored as the hash of `pa` and the account's real password refused at login.
/// `mosquitto_passwd -b` would carry any password, but shows it in the process list.
package enum PasswordHash {
    /// Mosquitto 2.0's `PW_DEFAULT_ITERATIONS`: the broker computes this hash at each login.
    package static let iterations = 101
    static let saltLength = 12
    static let hashLength = 64

    /// A new hash of `password` with a fresh random salt.
    package static func make(_ password: String) -> PBKDF2Hash {
        var generator = SystemRandomNumberGenerator()
        let salt = (0..<saltLength).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        let derived = pbkdf2(password: Array(password.utf8), salt: salt, iterations: iterations, length: hashLength)
        return PBKDF2Hash(
            iterations: iterations, salt: Data(salt).base64EncodedString(),
            hash: Data(derived).base64EncodedString())
    }

    /// The password file's field for `hash`: `$7$ITERATIONS$SALT$HASH`.
    package static func field(_ hash: PBKDF2Hash) -> String {
        "$7$\(hash.iterations)$\(hash.salt)$\(hash.hash)"
    }

    /// Whether `password` gives `hash`: derived with its salt and iterations, as long as its decoded hash,
    /// and compared in constant time. A hash of more than ten million iterations is refused unread.
    package static func matches(_ password: String, _ hash: PBKDF2Hash) -> Bool {
        guard let salt = Data(base64Encoded: hash.salt), let expected = Data(base64Encoded: hash.hash),
            !expected.isEmpty, hash.iterations <= 10_000_000
        else { return false }
        let derived = pbkdf2(
            password: Array(password.utf8), salt: Array(salt), iterations: hash.iterations,
            length: expected.count)
        var difference: UInt8 = 0
        for (a, b) in zip(derived, expected) { difference |= a ^ b }
        return difference == 0 && derived.count == expected.count
    }

    /// PBKDF2 (RFC 8018) with HMAC-SHA512: `length` bytes from `password` and `salt`.
    static func pbkdf2(password: [UInt8], salt: [UInt8], iterations: Int, length: Int) -> [UInt8] {
        let key = SymmetricKey(data: password)
        var output: [UInt8] = []
        var block: UInt32 = 1
        while output.count < length {
            var u = Array(
                HMAC<SHA512>.authenticationCode(
                    for: salt + withUnsafeBytes(of: block.bigEndian, Array.init), using: key))
            var t = u
            for _ in 1..<max(iterations, 1) {
                u = Array(HMAC<SHA512>.authenticationCode(for: u, using: key))
                for index in t.indices { t[index] ^= u[index] }
            }
            output += t
            block += 1
        }
        return Array(output.prefix(length))
    }
}
