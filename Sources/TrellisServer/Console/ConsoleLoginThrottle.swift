import Hummingbird
import NIOCore
import Synchronization

/// Slows down guessing the operator's password: an address that sent ``limit`` wrong logins within
/// ``window`` is answered 429 until the window that began with its first wrong login ends, right
/// password or not. A request without credentials (a browser's first, before it asks) is no wrong
/// login. Only addresses with recent wrong logins are kept, at most ``capacity`` of them; beyond,
/// the oldest window is dropped.
final class ConsoleLoginThrottle: Sendable {
    static let limit = 10
    static let window: Duration = .seconds(60)
    static let capacity = 4096

    private struct Failures {
        var count: Int
        var since: ContinuousClock.Instant
    }

    private let failures = Mutex([String: Failures]())
    /// Logins being checked, by address: counted with the wrong ones, so that many sent at once
    /// cannot all be checked before the first wrong one is counted.
    private let pending = Mutex([String: Int]())

    /// Seconds until `address` may try again; nil when it may now.
    func blocked(_ address: String, now: ContinuousClock.Instant = .now) -> Int? {
        let checking = pending.withLock { $0[address] ?? 0 }
        return failures.withLock { failures in
            guard let entry = failures[address] else { return checking >= Self.limit ? 1 : nil }
            let elapsed = now - entry.since
            if elapsed >= Self.window {
                failures[address] = nil
                return checking >= Self.limit ? 1 : nil
            }
            return entry.count + checking >= Self.limit ? max(1, Int((Self.window - elapsed).components.seconds)) : nil
        }
    }

    /// Takes a login from `address` for checking: nil when it may be checked (call ``checked(_:wrong:)``
    /// after), else the seconds to wait.
    func begin(_ address: String, now: ContinuousClock.Instant = .now) -> Int? {
        if let wait = blocked(address, now: now) { return wait }
        pending.withLock { $0[address, default: 0] += 1 }
        return nil
    }

    /// A login taken by ``begin(_:now:)`` was checked; `wrong` counts it as a wrong one.
    func checked(_ address: String, wrong: Bool, now: ContinuousClock.Instant = .now) {
        pending.withLock { pending in
            let left = (pending[address] ?? 1) - 1
            pending[address] = left > 0 ? left : nil
        }
        if wrong { failed(address, now: now) }
    }

    /// Counts a wrong login from `address`.
    func failed(_ address: String, now: ContinuousClock.Instant = .now) {
        failures.withLock { failures in
            if var entry = failures[address], now - entry.since < Self.window {
                entry.count += 1
                failures[address] = entry
                return
            }
            if failures.count >= Self.capacity {
                failures = failures.filter { now - $0.value.since < Self.window }
                if failures.count >= Self.capacity, let oldest = failures.min(by: { $0.value.since < $1.value.since }) {
                    failures[oldest.key] = nil
                }
            }
            failures[address] = Failures(count: 1, since: now)
        }
    }
}

/// The console's request context: Hummingbird's, with the client's address, which the login
/// throttle counts by.
struct ConsoleRequestContext: RequestContext, RemoteAddressRequestContext {
    var coreContext: CoreRequestContextStorage
    let remoteAddress: SocketAddress?

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }

    /// The address the throttle counts by: an IPv4 address, or an IPv6 address's /64 (a host is given
    /// a whole /64 and could take a new address for every guess); "unknown" when the channel has none,
    /// which then share one count.
    var address: String {
        guard let remoteAddress else { return "unknown" }
        if case let .v6(address) = remoteAddress {
            let bytes = withUnsafeBytes(of: address.address.sin6_addr) { Array($0) }
            // An IPv4 address mapped into IPv6 (::ffff:a.b.c.d) is counted as that IPv4 address.
            if bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF {
                return bytes[12...].map(String.init).joined(separator: ".")
            }
            return bytes[0..<8].map { String($0, radix: 16) }.joined(separator: ":") + "::/64"
        }
        return remoteAddress.ipAddress ?? "unknown"
    }
}
