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
        try await body(try await registry.plain().broker, TopicSpace())
    }

    /// Runs `body` with the shared plain broker, the port of its second listener, which takes at most
    /// QoS 1 (`max_qos 1`), and a topic space of its own.
    public static func withQoSCappedListener<T>(_ body: (TestBroker, Int, TopicSpace) async throws -> T)
        async throws -> T
    {
        let shared = try await registry.plain()
        return try await body(shared.broker, shared.qosCappedPort, TopicSpace())
    }

    /// Runs `body` with the shared broker that has TLS listeners, its certificates and a topic space
    /// of its own.
    public static func withTLS<T>(
        _ body: (TestBroker, TestCertificates, TLSListeners, TopicSpace) async throws -> T
    ) async throws -> T {
        let shared = try await registry.tls()
        return try await body(shared.broker, shared.pki, shared.listeners, TopicSpace())
    }

    private static let registry = Registry()

    /// What the process removes at exit: the brokers it started and their certificates.
    private static let leftovers = Mutex<(brokers: [TestBroker], certificates: [TestCertificates])>(([], []))

    /// The plain broker and the port of its listener that takes at most QoS 1.
    private struct PlainBroker: Sendable {
        let broker: TestBroker
        let qosCappedPort: Int
    }

    /// Starts each broker once; a start that failed is tried again by the next test. The start is
    /// kept as a task before it is awaited, so that tests asking meanwhile wait for the same one.
    private actor Registry {
        private var plainBroker: Task<PlainBroker, any Error>?
        private var tlsBroker: Task<TLSTestBroker, any Error>?
        private var exitHandlerInstalled = false

        func plain() async throws -> PlainBroker {
            let start =
                plainBroker
                ?? Task {
                    // The capped listener's port is free when probed; taken meanwhile, another is tried.
                    var lastError: any Error = TimeoutError(message: "no free loopback port")
                    for _ in 0..<3 {
                        guard let capped = PortProbe.freeLoopbackPort() else { continue }
                        do {
                            let broker = try await TestBroker.start(
                                persistent: false, extraConfig: ["listener \(capped) 127.0.0.1", "max_qos 1"])
                            await remember(broker, nil)
                            return PlainBroker(broker: broker, qosCappedPort: capped)
                        } catch {
                            lastError = error
                        }
                    }
                    throw lastError
                }
            plainBroker = start
            do {
                return try await start.value
            } catch {
                if plainBroker == start { plainBroker = nil }
                throw error
            }
        }

        func tls() async throws -> TLSTestBroker {
            let start =
                tlsBroker
                ?? Task {
                    let started = try await TLSTestBroker.start(persistent: false)
                    await remember(started.broker, started.pki)
                    return started
                }
            tlsBroker = start
            do {
                return try await start.value
            } catch {
                if tlsBroker == start { tlsBroker = nil }
                throw error
            }
        }

        private func remember(_ broker: TestBroker, _ pki: TestCertificates?) {
            SharedBroker.leftovers.withLock {
                $0.brokers.append(broker)
                if let pki { $0.certificates.append(pki) }
            }
            guard !exitHandlerInstalled else { return }
            exitHandlerInstalled = true
            atexit {
                let (brokers, certificates) = SharedBroker.leftovers.withLock { $0 }
                for broker in brokers {
                    broker.kill()
                    try? FileManager.default.removeItem(at: broker.directory)
                }
                for pki in certificates { pki.remove() }
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
