import Crypto
import Foundation
import TrellisBroker
import TrellisServer

/// The operator's account as the console checks it: the `operator` line of the password file of
/// the broker Trellis starts (``LocalAccounts``), read at each check so a password changed with
/// `trellis users password` applies at once. Mosquitto 2 writes `$7$` hashes (PBKDF2-SHA512 with
/// a base64 salt), which are computed here over HMAC-SHA512; an account of another form (the
/// `$6$` of Mosquitto 1.x) never matches.
package struct OperatorLogin: Sendable {
    package var passwordFile: String
    package var account = LocalAccounts.operatorAccount

    package init(passwordFile: String) {
        self.passwordFile = passwordFile
    }

    /// Whether `user` is the operator and `password` theirs.
    package func verify(_ user: String, _ password: String) -> Bool {
        guard user == account, let text = try? String(contentsOfFile: passwordFile, encoding: .utf8),
            let hash = MosquittoPasswordEntry.parse(text).last(where: { $0.username == account })?.pbkdf2
        else { return false }
        return Self.matches(password, hash)
    }

    /// The console's login over this account.
    package var consoleLogin: ConsoleLogin {
        let login = self
        return ConsoleLogin { user, password in login.verify(user, password) }
    }

    /// Whether `password` gives `hash`: PBKDF2-HMAC-SHA512 of its UTF-8 bytes with the decoded salt
    /// and the iterations, as long as the decoded hash, compared in constant time.
    static func matches(_ password: String, _ hash: PBKDF2Hash) -> Bool {
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
