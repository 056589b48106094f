import TrellisApplication
import ArgumentParser
import Foundation
import TrellisCore

extension UsersCommand {
    /// `trellis users local`: the two accounts of a broker on this machine, as `trellis run` keeps them
    /// for the broker it starts, for a broker it does not start (the Debian package's postinst runs it).
    struct Local: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Keep Trellis's own account and the local operator's in a password file and ACL, and write the ACL from the topic table.",
            discussion: """
                Makes the accounts trellis (role trellis) and operator (role operator) when they are missing, with \
                random passwords written to DIR/trellis.password and DIR/operator.password (mode 0600, never \
                printed), and the operator's login as Mosquitto's client option files in DIR/mosquitto-clients \
                (export XDG_CONFIG_HOME to it). Then it writes the whole ACL anew from the topic table: clients \
                without an account get rpi/torpi and rpi/fromrpi alone, every account its role's row \
                (docs/security.md). Accounts added with `trellis users add` stay. Run again after an upgrade, it \
                brings the ACL to the new version's table. Send the broker SIGHUP afterwards.
                """
        )

        @Option(name: .long, help: ArgumentHelp("Mosquitto password file.", valueName: "file"))
        var passwordFile: String

        @Option(name: .long, help: ArgumentHelp("Mosquitto ACL file.", valueName: "file"))
        var aclFile: String

        @Option(
            name: .long, help: ArgumentHelp("Where the passwords and the client option files go.", valueName: "dir"))
        var dir: String

        @Option(
            name: .long,
            help: ArgumentHelp(
                "The configuration `trellis run` reads (default trellis.yaml when present), for the topic prefixes the ACL is written with (plant.prefix, buttons.prefix, trellis.prefix, with TRELLIS_… variables).",
                valueName: "file"))
        var config: String?

        func run() async throws {
            let accounts = LocalAccounts(passwordFile: passwordFile, aclFile: aclFile, state: dir)
            let prefixes = try await EffectiveConfiguration.forCommand(file: config).relaySettings.topicPrefixes
            do {
                _ = try await accounts.ensure(prefixes: prefixes)
            } catch let error as CommandFailure {
                throw error
            } catch {
                throw fail("cannot keep the local accounts in \(passwordFile) and \(aclFile): \(describe(error))")
            }
            print(
                "kept the accounts \(LocalAccounts.trellisAccount) and \(LocalAccounts.operatorAccount) in \(passwordFile); "
                    + "wrote \(aclFile) from the topic table; passwords in \(dir)")
        }
    }
}
