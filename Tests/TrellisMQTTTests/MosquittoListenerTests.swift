import Foundation
import Testing
@testable import TrellisBroker
import TrellisTestSupport

/// The listeners a broker configuration opens, which `MosquittoProcess.start` waits for.
@Suite("Broker configuration listeners")
struct MosquittoListenerTests {
    @Test(
        "each TCP listener loopback can probe is found in file order, the first always",
        arguments: [
            ("listener 1883 127.0.0.1", ["127.0.0.1:1883"]),
            ("listener 1883\nlistener 8883 ::1\n", ["127.0.0.1:1883", "[::1]:8883"]),
            ("listener 18830 0.0.0.0\n\tcafile ca.crt\nlistener 18831 ::", ["127.0.0.1:18830", "[::1]:18831"]),
            ("listener 0 /run/mosquitto.sock\nlistener 1884", ["127.0.0.1:1884"]),
            ("# listener 1\nallow_anonymous true", ["127.0.0.1:1883"]),
            ("listener 1883 127.0.0.1\nlistener 8883 broker.example.lan", ["127.0.0.1:1883"]),
            ("listener 1883 127.0.0.1\nlistener 8883 localhost", ["127.0.0.1:1883", "localhost:8883"]),
            (
                "listener 1883 127.0.0.1\nlistener 8883\nbind_interface eth0\nlistener 9001",
                ["127.0.0.1:1883", "127.0.0.1:9001"]
            ),
            (
                "listener 1883\nsocket_domain ipv6\nlistener 8883 127.0.0.1\nsocket_domain ipv6",
                ["[::1]:1883", "127.0.0.1:8883"]
            ),
            ("", ["127.0.0.1:1883"])
        ])
    func listeners(config: String, expected: [String]) {
        #expect(MosquittoProcess.listeners(in: config).map(\.description) == expected)
    }

    @Test("a broker that exits on a later listener does not count as started, and says why")
    func laterListenerRefused() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("listeners-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        // A socket bound to the second listener's port but not listening: nothing accepts there, so
        // the check before the start passes, and the broker's own bind fails after its first listener.
        let bound = try LoopbackListener(backlog: nil)
        defer { close(bound.fd) }
        let taken = bound.port
        let free = try #require(PortProbe.freeLoopbackPort())
        let config = directory.appendingPathComponent("mosquitto.conf").path
        try "listener \(free) 127.0.0.1\nallow_anonymous true\nlistener \(taken) 127.0.0.1\n"
            .write(toFile: config, atomically: true, encoding: .utf8)
        // The log of an earlier run is kept; the failure reports only what this start wrote.
        let log = directory.appendingPathComponent("log").path
        try "an earlier run's line\n".write(toFile: log, atomically: true, encoding: .utf8)
        ProcessCensus.started("mosquitto")
        let broker = try MosquittoProcess(configPath: config, logPath: log)
        #expect(broker.listeners.map(\.port) == [free, taken])
        do {
            try await broker.start()
            Issue.record("the broker counted as started")
            await broker.stop()
        } catch let MosquittoProcess.StartError.exitedEarly(_, output) {
            #expect(output.contains("Address already in use"), "\(output)")
            #expect(!output.contains("an earlier run's line"), "\(output)")
        }
        #expect(broker.pid == nil)
    }

    @Test("the process listening on a port is told apart from a neighbour: a start waits for its own listener")
    func ownListener() throws {
        // A socket of this process, bound and not listening, then listening.
        let socket = try LoopbackListener(backlog: nil)
        defer { close(socket.fd) }
        #expect(ListeningSockets.process(getpid(), listensOn: socket.port) == false, "bound, not listening")
        #expect(listen(socket.fd, 8) == 0)
        #expect(ListeningSockets.process(getpid(), listensOn: socket.port) == true)
        // Another process does not hold it: a broker that is about to exit for this port would not count
        // as started although the port accepts.
        let other = try Process.run(URL(fileURLWithPath: "/bin/sleep"), arguments: ["30"])
        #expect(PortProbe.isAccepting(host: "127.0.0.1", port: socket.port))
        #expect(ListeningSockets.process(other.processIdentifier, listensOn: socket.port) == false)
        kill(other.processIdentifier, SIGKILL)
        other.waitUntilExit()
        #expect(ListeningSockets.process(other.processIdentifier, listensOn: socket.port) == false, "gone")
    }

    @Test("the kernel's socket table is read whole, past its first page")
    func wholeTable() throws {
        // 200 listening sockets: rows of about 150 bytes, several pages of the table.
        let sockets = try (0..<200).map { _ in try LoopbackListener(backlog: 1) }
        defer { sockets.forEach { close($0.fd) } }
        let table = try #require(TCPSocketTable(path: "/proc/self/net/tcp"))
        for socket in [sockets[0], sockets[199]] {
            #expect(table.sockets(onPort: socket.port).contains { $0.listening }, "port \(socket.port)")
            #expect(ListeningSockets.process(getpid(), listensOn: socket.port) == true)
        }
    }
}
