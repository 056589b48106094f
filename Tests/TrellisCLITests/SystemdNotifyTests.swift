import Foundation
import Testing
import TrellisBroker
import TrellisTestSupport
#if canImport(Glibc)
    import Glibc
#endif

/// `Type=notify`: the test plays systemd's side of `NOTIFY_SOCKET` (a unix datagram socket) and
/// sees `READY=1` once Trellis is connected and subscribed, `WATCHDOG=1` pings at half the
/// `WATCHDOG_USEC` it was given, and `STOPPING=1` when it is asked to stop.
@Suite("systemd notifications")
struct SystemdNotifyTests {
    /// A bound unix datagram socket that collects what is sent to it.
    final class NotifySocket: @unchecked Sendable {
        let path: String
        let fd: Int32
        private let lock = NSLock()
        private var received: [String] = []

        init(path: String) throws {
            self.path = path
            fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            let bytes = Array(path.utf8)
            withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
            let bound = withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
            guard fd >= 0, bound == 0 else {
                throw TimeoutError(message: "cannot bind \(path): \(String(cString: strerror(errno)))")
            }
            var interval = timeval(tv_sec: 0, tv_usec: 100_000)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &interval, socklen_t(MemoryLayout<timeval>.size))
            Thread.detachNewThread { [self] in
                var buffer = [UInt8](repeating: 0, count: 4096)
                while true {
                    let count = recv(fd, &buffer, buffer.count, 0)
                    if count > 0 {
                        let text = String(decoding: buffer[0..<count], as: UTF8.self)
                        lock.withLock { received.append(text) }
                    } else if count < 0, errno != EAGAIN, errno != EINTR {
                        return
                    }
                }
            }
        }

        var messages: [String] { lock.withLock { received } }

        deinit {
            close(fd)
            unlink(path)
        }
    }

    @Test("READY=1 once subscribed, WATCHDOG=1 at half the interval, STOPPING=1 at shutdown")
    func notifications() async throws {
        try await withTestBroker { broker in
            let socket = try NotifySocket(path: "/tmp/trellis-notify-\(UUID().uuidString.prefix(8))")
            var environment = ProcessInfo.processInfo.environment
            environment["NOTIFY_SOCKET"] = socket.path
            environment["WATCHDOG_USEC"] = "400000"
            let trellis = try TrellisBinary.start(
                ["run", "--broker", broker.address, "--state", temporaryDirectory()],
                environment: environment)
            try await eventually("READY=1") { socket.messages.contains { $0.hasPrefix("READY=1") } }
            // READY=1 follows `waitUntilConnected`; the log line of the connection comes from another task,
            // and through a pipe, so it is waited for rather than expected at the same instant.
            try await eventually("the connection's log line") { trellis.output.contains("connected to the broker") }
            try await eventually("three watchdog pings") { socket.messages.filter { $0 == "WATCHDOG=1" }.count >= 3 }
            #expect(!socket.messages.contains("STOPPING=1"))

            #expect(try await trellis.terminate() == 0, "\(trellis.output)")
            try await eventually("STOPPING=1", timeout: .seconds(5)) { socket.messages.contains("STOPPING=1") }
            let first = try #require(socket.messages.firstIndex { $0.hasPrefix("READY=1") })
            #expect(socket.messages.firstIndex(of: "STOPPING=1")! > first)
        }
    }
}
