/// A refusal its reader must act on: what is wrong and, where it helps, what to do about it. The
/// library throws it where a command or the relay cannot go on; the `trellis` executable prints it
/// once, as `trellis: error: …` on standard error, and exits 1.
package struct CommandFailure: Error, CustomStringConvertible, Sendable {
    package let description: String

    package init(_ description: String) {
        self.description = description
    }
}

/// The refusal `message`, to throw: `throw fail("there is no account \(name)")`.
package func fail(_ message: String) -> CommandFailure {
    CommandFailure(message)
}
