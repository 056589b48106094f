import Foundation
import Logging
import ServiceLifecycle
import TrellisRelay
#if canImport(Glibc)
    import Glibc
#endif

/// systemd's notification protocol (`sd_notify(3)`), for `Type=notify` units: one datagram per
/// state change to the socket `NOTIFY_SOCKET` names (a path, or `@` for the abstract namespace).
/// A few lines of socket code instead of linking libsystemd.
package struct SystemdNotifier: Sendable {
    let path: String

    /// The notifier of the unit this process runs under; nil outside systemd (no `NOTIFY_SOCKET`).
    package init?(environment: [String: String] = ProcessInfo.processInfo.environment) {
        guard let path = environment["NOTIFY_SOCKET"], !path.isEmpty, path.utf8.count < 108 else { return nil }
        self.path = path
    }

    /// Sends `state` (`READY=1`, `WATCHDOG=1`, `STOPPING=1`, `STATUS=…`); false when it could not.
    @discardableResult
    func notify(_ state: String) -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(path.utf8)
        // An abstract socket's name starts with a NUL instead of the `@` systemd writes.
        let abstract = bytes.first == UInt8(ascii: "@")
        if abstract { bytes[0] = 0 }
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            buffer.copyBytes(from: bytes)
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + (abstract ? 0 : 1))
        let sent = state.utf8CString.withUnsafeBufferPointer { text in
            withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                    sendto(fd, text.baseAddress, text.count - 1, Int32(MSG_NOSIGNAL), socketAddress, length)
                }
            }
        }
        return sent == state.utf8.count
    }

    /// Half the watchdog interval systemd asks for (`WATCHDOG_USEC`, for this process when
    /// `WATCHDOG_PID` names another), the period to send `WATCHDOG=1` at; nil without a watchdog.
    package static func watchdogPeriod(environment: [String: String] = ProcessInfo.processInfo.environment) -> Duration?
    {
        guard let text = environment["WATCHDOG_USEC"], let microseconds = Int64(text), microseconds > 0 else {
            return nil
        }
        if let pid = environment["WATCHDOG_PID"].flatMap(Int32.init), pid != getpid() { return nil }
        return .microseconds(microseconds / 2)
    }
}

/// Tells systemd how the relay is doing: `READY=1` once it is connected and subscribed,
/// `WATCHDOG=1` at half the unit's `WatchdogSec` from a task that runs on the MQTT network thread
/// (the thread that handles messages, so a stuck loop stops the pings and systemd restarts
/// Trellis), and `STOPPING=1` when shutdown begins.
package struct SystemdService: Service {
    let notifier: SystemdNotifier
    let relay: RelayService
    /// The liveness the watchdog pings stand for.
    let probes: Probes
    let watchdog: Duration?
    let logger: Logger

    package init(notifier: SystemdNotifier, relay: RelayService, probes: Probes, watchdog: Duration?, logger: Logger) {
        self.notifier = notifier
        self.relay = relay
        self.probes = probes
        self.watchdog = watchdog
        self.logger = logger
    }

    package func run() async throws {
        // Everything below is cancelled when shutdown begins; then systemd hears STOPPING=1.
        await cancelWhenGracefulShutdown {
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    while !Task.isCancelled {
                        if (try? await relay.client.waitUntilConnected(timeout: .seconds(3600))) != nil { break }
                    }
                    guard !Task.isCancelled else { return }
                    notifier.notify("READY=1\nSTATUS=connected to the broker and subscribed")
                    logger.debug("told systemd the relay is ready")
                }
                if let watchdog {
                    group.addTask(executorPreference: relay.client.taskExecutor) {
                        while (try? await Task.sleep(for: watchdog)) != nil {
                            // A relay whose handling is stuck while its store answers stops the pings too.
                            let liveness = await probes.liveness()
                            if liveness.healthy {
                                notifier.notify("WATCHDOG=1")
                            } else {
                                logger.error("not alive, so systemd's watchdog is not told otherwise: \(liveness.line)")
                            }
                        }
                    }
                }
                group.addTask {
                    while (try? await Task.sleep(for: .seconds(3600))) != nil {}
                }
                await group.waitForAll()
            }
        }
        notifier.notify("STOPPING=1")
    }
}
