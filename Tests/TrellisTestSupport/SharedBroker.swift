import Foundation
import Synchronization
import TrellisBroker

/// Brokers shared by the tests of one test process that need only a broker to talk to, as a client
/// library's tests use one broker: a plain Mosquitto, and one with the TLS listeners of
/// ``withTLSTestBroker(extraConfig:_:)``, neither keeping anything on disk. Each is started by the first
/// test that asks for it and killed when the test process exits normally (`atexit`; after a crash or an
/// interrupt, `make test` kills what is left running from its temporary directory), so such a test costs
/// its connections, not a broker's start.
///
/// A test on a shared broker keeps to its own ``TopicSpace`` and to client ids of its own, and leaves
/// the broker as it is: a test that stops, kills, pauses or reconfigures its broker, or reads more of its
/// log than lines naming its own clients, starts its own with ``withTestBroker(anonymous:extraConfig:_:)``.
public enum SharedBroker {
    /// Runs `body` with the shared plain broker and a topic space of its own.
    public static func with<T>(_ body: (TestBroker, TopicSpace) async throws -> T) async throws -> T {
        try await body(try await plainStarted().broker, TopicSpace())
    }

    /// Runs `body` with the shared plain broker, the port of its second listener, which takes at most
    /// QoS 1 (`max_qos 1`), and a topic space of its own.
    public static func withQoSCappedListener<T>(_ body: (TestBroker, Int, TopicSpace) async throws -> T)
        async throws -> T
    {
        let shared = try await plainStarted()
        return try await body(shared.broker, shared.qosCappedPort, TopicSpace())
    }

    /// Runs `body` with the shared broker that has TLS listeners, its certificates and a topic space
    /// of its own.
    public static func withTLS<T>(
        _ body: (TestBroker, TestCertificates, TLSListeners, TopicSpace) async throws -> T
    ) async throws -> T {
        let shared = try await tlsStarted()
        return try await body(shared.broker, shared.pki, shared.listeners, TopicSpace())
    }

    private static let plainBroker = Once<PlainBroker>()
    private static let tlsBroker = Once<TLSTestBroker>()

    private static func plainStarted() async throws -> PlainBroker {
        try await plainBroker.value {
            // The capped listener's port is free when probed; taken meanwhile, another is tried.
            var lastError: any Error = TimeoutError(message: "no free loopback port")
            for _ in 0..<3 {
                guard let capped = PortProbe.freeLoopbackPort() else { continue }
                do {
                    let broker = try await TestBroker.start(
                        persistent: false, extraConfig: ["listener \(capped) 127.0.0.1", "max_qos 1"])
                    remember(broker, nil)
                    return PlainBroker(broker: broker, qosCappedPort: capped)
                } catch {
                    lastError = error
                }
            }
            throw lastError
        }
    }

    private static func tlsStarted() async throws -> TLSTestBroker {
        try await tlsBroker.value {
            let started = try await TLSTestBroker.start(persistent: false)
            remember(started.broker, started.pki)
            return started
        }
    }

    /// The plain broker and the port of its listener that takes at most QoS 1.
    private struct PlainBroker: Sendable {
        let broker: TestBroker
        let qosCappedPort: Int
    }

    /// What the process removes at exit: the brokers it started and their certificates.
    private static let leftovers = Mutex<(brokers: [TestBroker], certificates: [TestCertificates])>(([], []))

    /// Kills the brokers and removes their directories and certificates at exit; installed once, by the
    /// first broker started.
    private static let exitHandler: Void = {
        atexit {
            let (brokers, certificates) = SharedBroker.leftovers.withLock { $0 }
            for broker in brokers {
                broker.kill()
                try? FileManager.default.removeItem(at: broker.directory)
            }
            for pki in certificates { pki.remove() }
        }
    }()

    private static func remember(_ broker: TestBroker, _ pki: TestCertificates?) {
        _ = exitHandler
        leftovers.withLock {
            $0.brokers.append(broker)
            if let pki { $0.certificates.append(pki) }
        }
    }

    /// One start, kept as a task before it is awaited, so that tests asking meanwhile wait for the same
    /// one; a start that failed is tried again by the next test.
    private final class Once<Value: Sendable>: Sendable {
        private let start = Mutex<Task<Value, any Error>?>(nil)

        func value(_ make: @escaping @Sendable () async throws -> Value) async throws -> Value {
            let task = start.withLock { start in
                if let start { return start }
                let task = Task { try await make() }
                start = task
                return task
            }
            do {
                return try await task.value
            } catch {
                start.withLock { if $0 == task { $0 = nil } }
                throw error
            }
        }
    }
}

/// One test's part of a shared broker's topic tree: `space("t/1")` is `<unique root>/t/1`, and
/// `space.id("doomed")` a client id no other test uses.
public struct TopicSpace: Sendable {
    /// The first level of every topic of the test.
    public let root = "test-\(UUID().uuidString.prefix(12).lowercased())"

    public init() {}

    /// `topic` under the test's root.
    public func callAsFunction(_ topic: String) -> String { "\(root)/\(topic)" }

    /// A client id made unique by the test's root.
    public func id(_ name: String) -> String { "\(name)-\(root)" }
}
