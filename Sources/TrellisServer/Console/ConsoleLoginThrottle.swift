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

    /// Seconds until `address` may try again; nil when it may now.
    func blocked(_ address: String, now: ContinuousClock.Instant = .now) -> Int? {
        failures.withLock { failures in
            guard let entry = failures[address] else { return nil }
            let elapsed = now - entry.since
            if elapsed >= Self.window {
                failures[address] = nil
                return nil
            }
            return entry.count >= Self.limit ? max(1, Int((Self.window - elapsed).components.seconds)) : nil
        }
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

    /// The IP address alone; "unknown" when the channel has none, which then share one count.
    var address: String { remoteAddress?.ipAddress ?? "unknown" }
}
