import Foundation
import TrellisApplication
import Logging
import ServiceLifecycle
import TrellisMQTT
import TrellisRelay
import TrellisServer
import TrellisStore
import TrellisStoreSQLite

/// Trellis's relay running in the test process against a `TestBroker`, with its state in a
/// temporary directory that survives `stopRelay()`/`startRelay()` (a restart of Trellis).
public final class RelayHarness: @unchecked Sendable {
    public let broker: TestBroker
    public let stateDirectory: String
    public var settings: RelaySettings
    /// Credentials of the relay's own account, for brokers that require them.
    public var credentials: (username: String, password: String)?
    /// The relay's MQTT client id; fixed, so its persistent session survives restarts.
    public let clientID = "trellis-\(UUID().uuidString.prefix(8))"
    /// The running relay service, to apply new settings as a configuration reload does.
    public private(set) var service: RelayService?
    private var group: ServiceGroup?
    private var runTask: Task<Void, any Error>?
    private var relayStore: SQLiteStore?
    private var ownClients: [MQTTClient] = []
    /// The servers started beside the relay (none by default), assembled as `trellis run` assembles them.
    /// Kept last: a test target that reaches the harness without seeing every module of
    /// `ServerSettings`'s members (TrellisSocketIO) must not place the fields after it.
    public var servers = ServerSettings()

    public init(broker: TestBroker, settings: RelaySettings = RelaySettings()) throws {
        self.broker = broker
        self.settings = settings
        stateDirectory =
            FileManager.default.temporaryDirectory.appendingPathComponent("trellis-state-\(UUID().uuidString)").path
    }

    /// The store of the running relay.
    public var store: SQLiteStore {
        get throws {
            guard let relayStore else { throw TimeoutError(message: "the relay is not running") }
            return relayStore
        }
    }

    /// Starts the relay and waits until it has published `online` (its subscriptions are then in place).
    public func startRelay() async throws {
        let store = try SQLiteStore(directory: stateDirectory)
        var mqtt = TrellisApplication.mqtt(
            host: broker.host, port: broker.port, clientID: clientID, username: credentials?.username,
            password: credentials?.password, settings: settings, maxUnhandled: 32)
        mqtt.reconnectDelay = 0.05...0.5
        var logger = Logger(label: "trellis.test.relay")
        logger.logLevel = .warning
        let application = try TrellisApplication(
            store: store, mqtt: mqtt, settings: settings, servers: servers, logger: logger)
        let group = application.group(logger: logger)
        let service = application.relay

        let watcher = try await connect(id: "watch-\(UUID().uuidString.prefix(8))", configure: watcherLogin)
        let inbox = await MessageCollector.collecting(watcher)
        try await watcher.subscribe(settings.statusTopic)

        self.group = group
        self.service = service
        self.relayStore = store
        runTask = Task { try await group.run() }
        try await inbox.wait(timeout: .seconds(60), "trellis/status = online") { messages in
            messages.last { $0.topic == self.settings.statusTopic }?.text == "online"
        }
        await watcher.shutdown()
    }

    /// How the harness's own status watcher logs in, on brokers that require it.
    public var watcherLogin: (inout MQTTConfiguration) -> Void = { _ in }

    /// Stops the relay gracefully (it publishes `offline` and flushes its state) and closes its store.
    public func stopRelay() async throws {
        await group?.triggerGracefulShutdown()
        try await runTask?.value
        try await relayStore?.close()
        group = nil
        service = nil
        runTask = nil
        relayStore = nil
    }

    /// A connected client for the test; stopped by `shutdown()`.
    public func connect(
        id: String = "client-\(UUID().uuidString.prefix(8))",
        configure: (inout MQTTConfiguration) -> Void = { _ in }
    ) async throws -> MQTTClient {
        let client = try await TestClients.connect(to: broker, id: id, configure: configure)
        ownClients.append(client)
        return client
    }

    /// Stops every client made by `connect` so far: the end of one test on a relay its suite shares.
    public func shutdownClients() async {
        for client in ownClients { await client.shutdown() }
        ownClients.removeAll()
    }

    /// Stops the relay and every client made by `connect`, and removes the state.
    public func shutdown() async {
        try? await stopRelay()
        await shutdownClients()
        try? FileManager.default.removeItem(atPath: stateDirectory)
    }
}

/// Runs `body` with a broker and a started relay, and tears both down afterwards.
public func withRelay<T>(
    settings: RelaySettings = RelaySettings(),
    brokerConfig: [String] = [],
    _ body: (RelayHarness) async throws -> T
) async throws -> T {
    try await withRelayHarness(settings: settings, brokerConfig: brokerConfig) { harness in
        try await harness.startRelay()
        return try await body(harness)
    }
}

/// Runs `body` with a broker (with `brokerConfig`'s lines added to its configuration) and a relay
/// not started yet (to prepare its state or the broker's retained messages first), and tears both
/// down afterwards.
public func withRelayHarness<T>(
    settings: RelaySettings = RelaySettings(),
    brokerConfig: [String] = [],
    _ body: (RelayHarness) async throws -> T
) async throws -> T {
    try await withTestBroker(extraConfig: brokerConfig) { broker in
        let harness = try RelayHarness(broker: broker, settings: settings)
        return try await withTearDown(of: harness, { await $0.shutdown() }, body)
    }
}

/// Runs `body` with a relay started on a broker that takes accounts: the relay logged in as
/// `trellis`, its status watcher as `watcher`, each with the password `pw-<name>`; tears the relay
/// down afterwards.
public func withRelayLoggedIn<T>(
    broker: TestBroker, settings: RelaySettings, watcher: String, _ body: (RelayHarness) async throws -> T
) async throws -> T {
    let relay = try RelayHarness(broker: broker, settings: settings)
    relay.credentials = ("trellis", "pw-trellis")
    relay.watcherLogin = {
        $0.username = watcher; $0.password = "pw-\(watcher)"
    }
    return try await withTearDown(of: relay, { await $0.shutdown() }) { relay in
        try await relay.startRelay()
        return try await body(relay)
    }
}
