import Foundation
import Synchronization
import Testing
import TrellisMQTT
import TrellisTestSupport

/// A broker behind a link that drops the client's packets silently (no RST, no ICMP): an nftables
/// rule of the test's own on the broker's loopback port, in the root namespace (so the broker is not
/// restarted meanwhile: its start waits for its port to accept). The client's
/// reconnection attempts must not wait for the kernel's SYN retries, which after 15 s come only at
/// 31, 63 and 127 s into an attempt: once the link is back the client connects within seconds, and a
/// stop meanwhile ends at once.
@Suite(
    "A broker link that drops packets silently", .serialized,
    .enabled(if: PacketDrop.usable, "needs root and nft: make test installs nftables"))
struct SilentLinkTests {
    /// Runs `body` with a client (keepalive 5 s, so an attempt that gets nothing is given up after
    /// 5 s) whose link to the broker drops everything it sends, from the moment the client gave its
    /// connection up (its keepalive got no answer); the rule goes when `body` ends.
    static func withDroppedLink(_ body: (MQTTClient, PacketDrop) async throws -> Void) async throws {
        try await withTestBroker { broker in
            let client = try await TestClients.connect(to: broker) { $0.keepAlive = 5 }
            let drop = try PacketDrop(port: broker.port)
            defer { drop.remove() }
            try await eventually("the client gave its connection up", timeout: .seconds(20)) { !client.isConnected }
            try await body(client, drop)
        }
    }

    @Test("reconnecting into a link that drops packets: the client's jobs run meanwhile; connected soon after")
    func reconnectsSoonAfter() async throws {
        try await Self.withDroppedLink { client, drop in
            // Well into an attempt, the network thread still runs the jobs of the tasks that prefer it
            // (a relay's message handling): a blocking connect would hold them until the kernel gives up.
            try await Task.sleep(for: .seconds(3))
            let ran = Mutex<Bool>(false)
            let asked = ContinuousClock.now
            Task(executorPreference: client.taskExecutor) { ran.withLock { $0 = true } }
            try await eventually("a job on the network thread ran", timeout: .seconds(2)) { ran.withLock { $0 } }
            let waited = ContinuousClock.now - asked
            // The fault's length, not a wait for an outcome: past the kernel's SYN of 15 s into an attempt.
            try await Task.sleep(for: .seconds(14))
            #expect(!client.isConnected)
            drop.remove()
            let back = ContinuousClock.now
            try await client.waitUntilConnected(timeout: .seconds(60))
            let took = ContinuousClock.now - back
            print("a job ran within \(waited) of being asked; connected \(took) after the link came back")
            #expect(took < .seconds(8), "connected \(took) after the link came back")
            // The attempts given up meanwhile said why, in the operator's words (the events are buffered:
            // read up to the connection after the drop's, or after a failed attempt should the buffer of
            // the newest 64 have lost the drop).
            var reasons: [String] = []
            var dropped = false
            for await event in client.events {
                if case let .connectFailed(reason, _) = event { reasons.append(reason) }
                if case .disconnected = event { dropped = true }
                if case .connected = event, dropped || !reasons.isEmpty { break }
            }
            #expect(
                reasons.contains { $0.contains("no TCP connection within 10.0 seconds") },
                "the failed attempts said: \(reasons)")
            await client.shutdown()
        }
    }

    @Test("a stop while the link drops packets ends within seconds, not when the kernel gives up")
    func stopsDuringAttempt() async throws {
        try await Self.withDroppedLink { client, _ in
            // Well into an attempt: a blocking connect would hold the network thread until 127 s.
            try await Task.sleep(for: .seconds(2))
            let stopping = ContinuousClock.now
            await client.shutdown()
            let took = ContinuousClock.now - stopping
            print("the stop took \(took)")
            #expect(took < .seconds(5), "the stop took \(took)")
        }
    }
}

/// An nftables table dropping the packets sent to 127.0.0.1:`port` (the client's side of the link),
/// removed by ``remove()`` (idempotent). Fails when `nft` is missing or refuses (it needs root;
/// `make deps` installs nftables).
final class PacketDrop: Sendable {
    let table: String

    /// Whether rules can be made here: root, with nft installed.
    static var usable: Bool { geteuid() == 0 && executable != nil }

    static let executable = ["/usr/sbin/nft", "/sbin/nft", "/usr/bin/nft"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    init(port: Int) throws {
        Self.sweep()
        table = "trellis_test_\(port)_\(getpid())"
        let rules = """
            table inet \(table) {
                chain out { type filter hook output priority 0; ip daddr 127.0.0.1 tcp dport \(port) drop; }
            }
            """
        let status = try Self.nft(["-f", "-"], input: rules)
        guard status == 0 else {
            throw CocoaError(.executableLoad, userInfo: [NSLocalizedDescriptionKey: "nft -f failed (\(status))"])
        }
    }

    func remove() {
        _ = try? Self.nft(["delete", "table", "inet", table], input: nil, quiet: true)
    }

    /// Removes the tables a test run that died left behind (its process is gone), whose rule would
    /// drop the packets of a later broker on the same port.
    static func sweep() {
        let listing = Pipe()
        guard (try? nft(["list", "tables"], input: nil, quiet: true, output: listing)) == 0,
            let text = String(data: listing.fileHandleForReading.readDataToEndOfFile(), encoding: .utf8)
        else { return }
        for line in text.split(separator: "\n") {
            guard let name = line.split(separator: " ").last, name.hasPrefix("trellis_test_"),
                let pid = name.split(separator: "_").last.flatMap({ Int32($0) }), kill(pid, 0) != 0
            else { continue }
            _ = try? nft(["delete", "table", "inet", String(name)], input: nil, quiet: true)
        }
    }

    private static func nft(
        _ arguments: [String], input: String?, quiet: Bool = false, output: Pipe? = nil
    ) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable ?? "/usr/sbin/nft")
        process.arguments = arguments
        let pipe = Pipe()
        process.standardInput = pipe
        if let output { process.standardOutput = output }
        if quiet { process.standardError = FileHandle.nullDevice }
        try process.run()
        if let input { pipe.fileHandleForWriting.write(Data(input.utf8)) }
        try pipe.fileHandleForWriting.close()
        process.waitUntilExit()
        return process.terminationStatus
    }
}
