import Foundation
import TrellisTestSupport

/// A command run in a terminal of its own: a detached tmux session on a private tmux server, whose
/// screen (with its history) is read back as text. What `trellis watch` shows is checked on what a
/// person would see, colours and all, not on a pipe.
struct TerminalScreen {
    let socket = "trellis-test-\(UUID().uuidString.prefix(8))"

    /// Starts `command` (a shell command line) in a 200×50 terminal whose history keeps 5,000 lines;
    /// the pane stays after the command exits, so its last screen can still be read.
    static func start(_ command: String) async throws -> TerminalScreen {
        let screen = TerminalScreen()
        try await screen.tmux(
            "-f", "/dev/null", "new-session", "-d", "-x", "200", "-y", "50", "-s", "watch",
            "sh -c \(Self.quoted(command))", ";", "set-option", "-g", "history-limit", "5000", ";",
            "set-option", "-t", "watch", "remain-on-exit", "on")
        return screen
    }

    /// The screen and its history as plain text, wrapped lines joined (`colours`: with their escapes).
    func text(colours: Bool = false) async throws -> String {
        try await tmux(["capture-pane", "-p", "-J", "-S", "-", "-t", "watch"] + (colours ? ["-e"] : []))
    }

    /// Waits until the screen shows `line`.
    func waitFor(_ line: String, timeout: Duration = .seconds(20)) async throws {
        try await eventually("the terminal shows \(line)", timeout: timeout) {
            try await text().contains(line)
        }
    }

    /// Ends the session and its server.
    func close() async {
        _ = try? await tmux("kill-server")
    }

    @discardableResult
    func tmux(_ arguments: String...) async throws -> String { try await tmux(arguments) }

    @discardableResult
    func tmux(_ arguments: [String]) async throws -> String {
        try await ToolProcess.run(["/usr/bin/tmux", "-L", socket] + arguments, timeout: .seconds(20))
    }

    static func quoted(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'" }
}
