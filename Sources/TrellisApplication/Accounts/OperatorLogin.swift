import Foundation
import TrellisBroker
import TrellisServer

/// The operator's account as the console checks it: the `operator` line of the password file of
/// the broker Trellis starts (``LocalAccounts``), read at each check so a password changed with
/// `trellis users password` applies at once. Its `$7$` hash is checked by ``PasswordHash``; an account
/// of another form (the `$6$` of Mosquitto 1.x) never matches.
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
        return PasswordHash.matches(password, hash)
    }

    /// The console's login over this account.
    package var consoleLogin: ConsoleLogin {
        let login = self
        return ConsoleLogin { user, password in login.verify(user, password) }
    }
}
