import Foundation
import Testing
import TrellisApplication
import TrellisBroker
import TrellisTestSupport
@testable import trellis

/// `trellis users` with the dynamic security backend when it cannot do its work: one clear line
/// saying what to check, never the administration password, and no crash. The commands' store
/// (`DynamicSecurityAccounts` over `DynamicSecurityControl`) is run in-process; a broker is started
/// only where its answer is the point.
@Suite("users with dynamic security: failures")
struct DynamicSecurityFailureTests {
    static let secret = "admin-secret-value"

    /// The accounts behind `users list --admin-password-file DIR/admin.password --timeout 3` at `broker`,
    /// the file holding ``secret``.
    static func accounts(broker: String) throws -> DynamicSecurityAccounts {
        let directory = temporaryDirectory()
        try (secret + "\n").write(toFile: directory + "/admin.password", atomically: true, encoding: .utf8)
        let list = try UsersCommand.List.parse([
            "--broker", broker, "--timeout", "3", "--admin-password-file", directory + "/admin.password"
        ])
        return try #require(list.options.store() as? DynamicSecurityAccounts)
    }

    /// The line `list` fails with.
    static func failure(_ accounts: some AccountStore) async -> String {
        do {
            _ = try await accounts.list()
            return "listed"
        } catch {
            return "\(error)"
        }
    }

    @Test("no administration password file: dynamic security asked for, the file named")
    func noPasswordFile() async throws {
        let list = try UsersCommand.List.parse(["--backend", "dynamic-security"])
        #expect(list.options.usesDynamicSecurity)
        #expect(list.options.admin.adminPasswordFile == "trellis-state/admin.password")
        let missing = temporaryDirectory() + "/trellis-state/admin.password"
        let accounts = DynamicSecurityAccounts(
            control: DynamicSecurityControl(
                address: try #require(BrokerAddress(parsing: list.options.broker)), admin: list.options.admin.adminUser,
                passwordFile: missing, timeout: .seconds(3)))
        let message = await Self.failure(accounts)
        #expect(message.contains("cannot read the password of trellis-admin from \(missing)"), "\(message)")
    }

    @Test("no broker listening")
    func unreachable() async throws {
        let port = try #require(PortProbe.freeLoopbackPort())
        let message = await Self.failure(try Self.accounts(broker: "127.0.0.1:\(port)"))
        #expect(message.contains("cannot reach the broker at 127.0.0.1:\(port)"), "\(message)")
        #expect(!message.contains(Self.secret))
    }

    @Test(
        "a broker of the file-based profile refuses the administration account",
        arguments: ["Not authorized", "Connection Refused: not authorised."])
    func refusedLogin(_ reason: String) throws {
        // The reason libmosquitto gives for a refused CONNECT (MQTT 5, and 3.1.1); that a real broker refuses an
        // account it does not know, with it, is `DynamicSecurityAccountsTests` and `PasswordArgumentsTests`'.
        let address = try #require(BrokerAddress(parsing: "127.0.0.1:1883"))
        let message = DynamicSecurityControl.loginFailure(reason: reason, address: address, admin: "trellis-admin")
            .description
        #expect(message.contains("refused the login of trellis-admin"), "\(message)")
        #expect(message.contains("broker.dynsec.conf"), "\(message)")
        let other = DynamicSecurityControl.loginFailure(
            reason: "Connection refused", address: address, admin: "trellis-admin"
        ).description
        #expect(other.contains("cannot reach the broker at 127.0.0.1:1883"), "\(other)")
    }

    @Test("a broker without the plugin never answers")
    func noPlugin() async throws {
        try await withTestBroker { broker in
            let message = await Self.failure(try Self.accounts(broker: broker.address))
            #expect(message.contains("is the dynamic security plugin loaded"), "\(message)")
            #expect(!message.contains(Self.secret))
        }
    }

    @Test(
        "bad options are refused before anything is tried",
        arguments: [
            (["--broker", "127.0.0.1:99999"], "is not HOST:PORT"),
            (["--timeout", "0"], "--timeout must be between"),
            (["--backend", "ldap"], "ldap")
        ])
    func badOptions(_ options: [String], _ expected: String) {
        do {
            _ = try UsersCommand.List.parse(options)
            Issue.record("\(options) were taken")
        } catch {
            let message = UsersCommand.List.message(for: error)
            #expect(message.contains(expected), "\(message)")
        }
    }
}
