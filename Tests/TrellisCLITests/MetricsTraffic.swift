import Foundation
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
import TrellisBroker
import TrellisMQTT
import TrellisTestSupport

/// `trellis run` with `--metrics`, `--socketio` and a bridge (to the same broker, under
/// `site/home1/`) against a test broker, and a client that sends it the traffic that makes most
/// series exist: a plant request, a malformed one (a dead letter), a press, a device log line, a
/// reading the bridge carries up and a Socket.IO handshake.
struct MetricsTraffic {
    let broker: TestBroker
    let trellis: TrellisBinary
    let stateDirectory: String
    let metricsPort: Int
    let socketIOPort: Int
    let client: MQTTClient
    let inbox: MessageCollector

    var metricsURL: String { "http://127.0.0.1:\(metricsPort)/metrics" }

    /// Starts Trellis on free loopback ports and connects the client; `stop()` ends both.
    static func start(broker: TestBroker) async throws -> MetricsTraffic {
        let state = temporaryDirectory()
        let config = state + "/trellis.yaml"
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
        try """
        bridges:
          cloud:
            url: mqtt://\(broker.address)
            out:
              - topic: "sensors/#"
                prefix: "site/home1/"
        """.write(toFile: config, atomically: true, encoding: .utf8)
        let (trellis, ports) = try await TrellisBinary.startListening(
            ports: 2,
            { ports in
                [
                    "run", "--broker", broker.address, "--state", state, "--metrics", "127.0.0.1:\(ports[0])",
                    "--socketio", "127.0.0.1:\(ports[1])", "--config", config
                ]
            }, ready: { ports in ports.map { "Server started and listening on 127.0.0.1:\($0)" } })
        do {
            try await trellis.waitForOutput("connected to the broker")
            let (client, inbox) = try await TestClients.connectCollecting(
                to: broker, "rpi/fromrpi/+", "trellis/deadletter", "p2o/buttons/b1/state", "trellis/logs/d1",
                "site/home1/sensors/#")
            return MetricsTraffic(
                broker: broker, trellis: trellis, stateDirectory: state, metricsPort: ports[0],
                socketIOPort: ports[1], client: client, inbox: inbox)
        } catch {
            trellis.process.signal(SIGKILL)
            trellis.process.waitUntilExit()
            throw error
        }
    }

    /// One of each kind of message, each waited for until Trellis has answered or recorded it.
    func sendEverything() async throws {
        try await askNumberOfPlants(id: 0)
        try await client.publishAndWait(topic: "rpi/torpi/metrics", payload: Array("nonsense".utf8))
        try await inbox.messages(on: "trellis/deadletter")
        try await client.publishAndWait(topic: "p2o/buttons/b1/press", payload: [])
        try await inbox.messages(on: "p2o/buttons/b1/state")
        try await client.publishAndWait(topic: "devices/d1/log", payload: Array("booted".utf8))
        try await inbox.messages(on: "trellis/logs/d1")
        try await client.publishAndWait(topic: "sensors/metrics", payload: Array("21.5".utf8))
        try await inbox.messages(on: "site/home1/sensors/metrics")
        let handshake = URL(string: "http://127.0.0.1:\(socketIOPort)/socket.io/?EIO=4&transport=polling")!
        let (_, response) = try await URLSession.shared.data(from: handshake)
        guard (response as? HTTPURLResponse)?.statusCode == 200 else {
            throw TimeoutError(message: "the Socket.IO handshake was refused: \(response)")
        }
    }

    /// A plant request, waited for until answered. Each `id` is a sender of its own: one sender
    /// asking again and again would be limited as a spammer.
    func askNumberOfPlants(id: Int) async throws {
        let request = "ID:\(id);sender:m\(id);receiver:Host-RPI3B+;payload:;operation:REQ_numPlants"
        try await client.publishAndWait(topic: "rpi/torpi/m\(id)", payload: Array(request.utf8))
        try await inbox.messages(on: "rpi/fromrpi/m\(id)")
    }

    /// `/metrics` now.
    func scrape() async throws -> String {
        let (status, text) = try await MetricsTests.get(metricsURL)
        guard status == 200 else { throw TimeoutError(message: "/metrics answered \(status): \(text)") }
        return text
    }

    /// Stops Trellis (SIGTERM, then SIGKILL if it lingers) and the client, and removes the state.
    func stop() async {
        if trellis.process.isRunning { trellis.process.signal(SIGTERM) }
        _ = try? await trellis.waitForExit()
        await client.shutdown()
        try? FileManager.default.removeItem(atPath: stateDirectory)
    }
}

/// Runs `body` with a test broker and `MetricsTraffic` on it, and stops both whatever the outcome.
func withMetricsTraffic<T>(_ body: (MetricsTraffic) async throws -> T) async throws -> T {
    try await withTestBroker { broker in
        try await withTearDown(of: try await MetricsTraffic.start(broker: broker), { await $0.stop() }, body)
    }
}
