import TrellisApplication
import ArgumentParser
import Foundation

extension UsersCommand {
    /// Where `add` and `passwd` take the password from: standard input (`--password-stdin`), the
    /// command line (`--password`, which every user of the machine can read in the process list while
    /// the command runs), or a random one, printed once.
    struct PasswordInput: ParsableArguments {
        @Option(
            name: .long,
            help:
                "The password, on the command line: other users can see it in the process list while this runs; --password-stdin cannot be seen (default: a random one, printed)."
        )
        var password: String?

        @Flag(
            name: .long,
            help: "Read the password from the first line of standard input (printf '%s\\n' \"$PW\" | trellis users …).")
        var passwordStdin = false

        func validate() throws {
            if password != nil && passwordStdin {
                throw ValidationError("give --password or --password-stdin, not both")
            }
            if password?.contains(where: \.isNewline) == true {
                throw ValidationError("a password may not contain a line break")
            }
        }

        /// The password, and whether it was generated (and so is to be printed); `input` reads the first
        /// line of standard input.
        func resolve(input: () -> String? = { readLine(strippingNewline: true) }) throws -> (
            secret: String, generated: Bool
        ) {
            if let password { return (password, false) }
            guard passwordStdin else { return (randomPassword(), true) }
            guard let line = input(), !line.isEmpty else {
                throw fail("--password-stdin: standard input held no password (one line is read)")
            }
            return (line.hasSuffix("\r") ? String(line.dropLast()) : line, false)
        }
    }
}
