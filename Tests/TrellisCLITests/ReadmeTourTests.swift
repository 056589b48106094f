import Foundation
import Testing
import TrellisBroker
import TrellisTestSupport

/// The README's two-minute tour, run as written against `trellis run` with its own broker (on a
/// free loopback port instead of 1883), so the front page cannot promise what Trellis does not do.
@Suite("The README's tour")
struct ReadmeTourTests {
    /// Seconds a mosquitto_sub or mosquitto_rr of the tour waits for its message (`-W`).
    static let commandTimeout = 10

    @Test("the README has a tour, and every command in it says what it prints or prints nothing")
    func tourIsThere() throws {
        let tour = try ReadmeTour(markdown: MarkdownDocument(path: "README.md").text)
        #expect(tour.steps.count >= 8)
        for step in tour.steps {
            #expect(step.command.hasPrefix("mosquitto_"), "not a Mosquitto client command: \(step.command)")
            #expect(step.command.contains("-h 127.0.0.1 "), "a tour command must name the broker: \(step.command)")
            if step.command.hasPrefix("mosquitto_rr") || step.command.hasPrefix("mosquitto_sub") {
                #expect(!step.expected.isEmpty, "the README does not say what this prints: \(step.command)")
            }
        }
    }

    @Test("every command of the tour prints what the README says, against a fresh `trellis run`")
    func tourRunsAsWritten() async throws {
        let tour = try ReadmeTour(markdown: MarkdownDocument(path: "README.md").text)
        let directory = temporaryDirectory()
        // The README's notification section, its webhook a real HTTP server (Tests/Notifications/receiver.py).
        let secret = directory + "/hook.secret"
        FileManager.default.createFile(
            atPath: secret, contents: Data("tour-secret\n".utf8), attributes: [.posixPermissions: 0o600])
        let receiver = try ToolProcess([
            "/usr/bin/python3", Repository.root.appendingPathComponent("Tests/Notifications/receiver.py").path,
            "--secret-file", secret
        ])
        try await receiver.waitFor("listening ")
        let hookPort = try #require(receiver.text.split(separator: "\n").first.flatMap { Int($0.dropFirst(10)) })
        let settings = directory + "/trellis.yaml"
        try Self.notificationSection(readme: MarkdownDocument(path: "README.md").text)
            .replacingOccurrences(of: "http://127.0.0.1:8123/", with: "http://127.0.0.1:\(hookPort)/")
            .replacingOccurrences(of: "/etc/trellis/hook.secret", with: secret)
            .write(toFile: settings, atomically: true, encoding: .utf8)
        let trellis: TrellisBinary
        let port: Int
        do {
            (trellis, _, port) = try await TrellisBinary.startOwningBroker(in: directory, ["--config", settings])
        } catch {
            try? await receiver.stop(SIGKILL)
            throw error
        }
        // Trellis is stopped with SIGTERM whatever happens, so it stops the broker it started.
        var failure: (any Error)?
        do {
            // As the README has the reader do first: Mosquitto's clients log in as the local operator.
            let readme = try MarkdownDocument(path: "README.md").text
            #expect(readme.contains("export XDG_CONFIG_HOME=$PWD/trellis-state/mosquitto-clients"))
            try await run(tour, port: port, login: "export XDG_CONFIG_HOME=\(directory)/state/mosquitto-clients; ")
        } catch {
            failure = error
        }
        if failure == nil {
            // The dry Fern's notification, at the webhook the README's section names.
            try await receiver.waitFor("Fern is dry", timeout: .seconds(30))
            #expect(receiver.text.contains(#""signature_ok": true"#), "\(receiver.text)")
        }
        #expect(try await trellis.terminate() == 0)
        try? await receiver.stop(SIGKILL)
        if let failure { throw failure }
    }

    /// The README's `notifications:` example: the YAML block that follows the tour.
    static func notificationSection(readme: String) throws -> String {
        let after = try #require(readme.range(of: "<!-- end:tour -->")).upperBound
        let start = try #require(readme.range(of: "```yaml\n", range: after..<readme.endIndex)).upperBound
        let end = try #require(readme.range(of: "```", range: start..<readme.endIndex)).lowerBound
        return String(readme[start..<end])
    }

    /// Runs every step of `tour` against the broker on `port`, with the tour's second terminal
    /// watching everything that crosses it.
    private func run(_ tour: ReadmeTour, port: Int, login: String) async throws {
        let watcher = try TrellisBinary.start(
            ["-c", login + "exec mosquitto_sub -h 127.0.0.1 -p \(port) -t '#' -v"], executable: "/bin/sh")
        defer { watcher.process.signal(SIGKILL) }
        // The retained status arrives as soon as the watcher is subscribed.
        try await watcher.waitForOutput("trellis/status online", timeout: .seconds(30))

        for step in tour.steps {
            let command = step.command(port: port, timeoutSeconds: Self.commandTimeout)
            let shell = try TrellisBinary.start(["-c", login + command], executable: "/bin/sh")
            let status = try await shell.waitForExit(timeout: .seconds(Self.commandTimeout + 20))
            #expect(status == 0, "\(step.command) exited with \(status): \(shell.output)")
            #expect(
                step.matches(shell.output),
                "\(step.command)\nprinted:\n\(shell.output)\nthe README says:\n\(step.expected.joined(separator: "\n"))"
            )
        }

        // What the README says the second terminal shows: the answers on their reply topics too,
        // the rejected request as a dead letter, and the press fanned out to the online phone.
        for line in [
            "rpi/fromrpi/operator ID:2;sender:Host-RPI3B+;receiver:operator;payload:[{\"at\"%3A",
            "trellis/deadletter {\"payload\":\"ID:3;sender:operator;",
            "\"reason\":\"ERR_missingKeys\"",
            "p2o/clients/operator/register-response {\"status\":\"success\"}",
            "p2o/clients/operator/button-press door",
            "trellis/response/devices/get {\"data\":{",
            "trellis/response/catalog/get {\"data\":{",
            "trellis/alerts/Fern {\"alerts\":[{\"kind\":\"dry\""
        ] {
            try await watcher.waitForOutput(line, timeout: .seconds(10))
        }
    }
}
