import Foundation
import Testing
import TrellisBroker
import TrellisMQTT
import TrellisStore
import TrellisStorePostgres
import TrellisStoreSQLite
import TrellisTestSupport

/// The store goes away while requests are being handled: nothing delivered is dropped. A plant
/// request, a press and a plant edit that meet the outage wait, unacknowledged, and are answered
/// once the store is back; none is dead-lettered as `store_error`, each counted once. On SQLite
/// the outage is another process holding the write lock (SQLITE_BUSY); on PostgreSQL the server
/// is stopped (fast shutdown: 57P01 for a session in flight, then connections refused) and
/// started again.
@Suite("A store outage in the middle of requests", .serialized)
struct StoreOutageTests {
    enum Backend: String, Sendable, CaseIterable {
        case sqlite, postgres
    }

    /// How the outage is made and ended.
    struct Outage {
        var begin: () async throws -> Void
        var end: () async throws -> Void
    }

    static func request(_ id: Int, from client: String, _ operation: String, payload: String = "") -> [UInt8] {
        ScaleOutTests.request(id, from: client, operation, payload: payload)
    }

    @Test("requests during the outage are answered after it, none refused, each once", arguments: Backend.allCases)
    func outage(_ backend: Backend) async throws {
        if backend == .postgres {
            try await OwnPostgresCluster.with { cluster in
                try await run(
                    store: cluster.url,
                    outage: Outage(begin: { try await cluster.halt() }, end: { try await cluster.resume() }))
            }
        } else {
            try await run(store: nil, outage: nil)
        }
    }

    /// Starts a relay on `store` (SQLite in its state directory when nil), sends requests around
    /// an outage and checks what came back.
    func run(store: PostgresURL?, outage given: Outage?) async throws {
        try await withTestBroker { broker in
            let state = temporaryDirectory()
            var environment = ProcessInfo.processInfo.environment
            if let store { environment["TRELLIS_STATE_STORE"] = store.urlWithPassword }
            let trellis = try TrellisBinary.start(
                ["run", "--broker", broker.address, "--state", state], environment: environment)
            try await trellis.waitForOutput("connected to the broker", timeout: .seconds(60))
            var locker: TrellisBinary?
            let outage =
                given
                ?? Outage(
                    begin: {
                        let script = SocketIOClientTests.root.appendingPathComponent("Tests/Faults/sqlite_lock.py").path
                        let process = try TrellisBinary.start(
                            [script, state + "/" + SQLiteStore.fileName], executable: "/usr/bin/python3")
                        try await process.waitForOutput("locked")
                        locker = process
                    },
                    end: {
                        locker?.process.signal(SIGTERM)
                        _ = try await locker?.waitForExit()
                    })

            let (phone, seen) = try await TestClients.connectCollecting(
                to: broker, id: "phones", "rpi/fromrpi/#", "trellis/deadletter", "p2o/buttons/door/state")
            try await phone.publishAndWait(
                topic: "rpi/torpi/a0", payload: Self.request(0, from: "a0", "REQ_addNewPlant", payload: "Fern,0x36"))
            try await seen.messages(on: "rpi/fromrpi/a0")

            // Requests in flight as the store goes, and more while it is away.
            for index in 1...10 {
                try phone.publish(
                    topic: "rpi/torpi/n\(index)", payload: Self.request(index, from: "n\(index)", "REQ_numPlants"),
                    qos: .atLeastOnce)
            }
            try await outage.begin()
            try phone.publish(topic: "p2o/buttons/door/press", payload: [], qos: .atLeastOnce)
            try phone.publish(
                topic: "rpi/torpi/a1", payload: Self.request(1, from: "a1", "REQ_addNewPlant", payload: "Ivy,0x37"),
                qos: .atLeastOnce)
            for index in 11...20 {
                try phone.publish(
                    topic: "rpi/torpi/n\(index)", payload: Self.request(index, from: "n\(index)", "REQ_numPlants"),
                    qos: .atLeastOnce)
            }
            try await trellis.waitForOutput("the state store cannot commit", timeout: .seconds(60))
            #expect(await seen.received(on: "trellis/deadletter").isEmpty, "\(trellis.output)")
            try await outage.end()

            // Every request answered once, in order, none refused.
            try await seen.messages(on: "rpi/fromrpi/a1", timeout: .seconds(90))
            for index in 1...20 {
                let answers = try await seen.messages(on: "rpi/fromrpi/n\(index)", timeout: .seconds(60))
                #expect(answers.count == 1)
                #expect(
                    answers.first?.text?.hasSuffix("operation:RES_numPlants") == true, "\(answers.first?.text ?? "")")
            }
            #expect(
                await seen.received(on: "rpi/fromrpi/a1").first?.text?.hasSuffix("operation:RES_addNewPlant") == true)
            let states = try await seen.messages(on: "p2o/buttons/door/state", timeout: .seconds(60))
            #expect(states.last?.text?.contains(#""total":1"#) == true, "\(states.map { $0.text ?? "" })")
            let refused = await seen.received(on: "trellis/deadletter").map { $0.text ?? "" }
            #expect(refused.isEmpty, "\(refused)")
            try await trellis.waitForOutput("the state store commits again", timeout: .seconds(30))

            // The edit and the press happened once: two plants, one press.
            try await phone.publishAndWait(topic: "rpi/torpi/z", payload: Self.request(99, from: "z", "REQ_numPlants"))
            let count = try await seen.messages(on: "rpi/fromrpi/z")
            #expect(count.first?.text?.contains("payload:2;") == true, "\(count.first?.text ?? "")")

            #expect(try await trellis.terminate() == 0, "\(trellis.output)")
            await phone.shutdown()
        }
    }

    @Test(
        "two relays on a PostgreSQL server stopped and started: loud, unready naming the store, then ready; nothing lost or doubled"
    )
    func twoRelays() async throws {
        try await OwnPostgresCluster.with { cluster in
            try await withTestBroker { broker in
                var relays: [(trellis: TrellisBinary, health: String, metrics: String)] = []
                for id in ["r1", "r2"] {
                    var environment = ProcessInfo.processInfo.environment
                    environment["TRELLIS_STATE_STORE"] = cluster.url.urlWithPassword
                    let (trellis, ports) = try await TrellisBinary.startListening(
                        ports: 2,
                        { ports in
                            [
                                "run", "--broker", broker.address, "--share", "g", "--client-id", id, "--state",
                                temporaryDirectory(),
                                "--health", "\(ports[0])", "--metrics", "\(ports[1])"
                            ]
                        }, ready: { ports in ports.map { "Server started and listening on 127.0.0.1:\($0)" } },
                        environment: environment)
                    relays.append(
                        (trellis, "http://127.0.0.1:\(ports[0])/readyz", "http://127.0.0.1:\(ports[1])/metrics"))
                }
                for relay in relays { try await relay.trellis.waitForOutput("connected to the broker") }
                for relay in relays {
                    try await eventually("ready") { try await MetricsTests.get(relay.health).0 == 200 }
                }
                let (phone, seen) = try await TestClients.connectCollecting(
                    to: broker, id: "phones", "rpi/fromrpi/#", "trellis/deadletter")

                try await cluster.halt()
                // Both relays say what is wrong, naming the store, without hanging.
                for relay in relays {
                    try await eventually("unready", timeout: .seconds(30)) {
                        let (status, body) = try await MetricsTests.get(relay.health)
                        return status == 503 && body.contains(#""store":{"#) && body.contains("state store")
                    }
                }
                for index in 0..<60 {
                    try phone.publish(topic: "p2o/buttons/door/press", payload: [], qos: .atLeastOnce)
                    if index % 2 == 0 {
                        try phone.publish(
                            topic: "rpi/torpi/q\(index)",
                            payload: Self.request(index, from: "q\(index)", "REQ_numPlants"),
                            qos: .atLeastOnce)
                    }
                }
                for relay in relays {
                    try await relay.trellis.waitForOutput("the state store cannot commit", timeout: .seconds(60))
                }
                // /metrics answers throughout, and says the store is not writable.
                for relay in relays {
                    try await eventually("trellis_store_writable 0", timeout: .seconds(30)) {
                        let (status, body) = try await MetricsTests.get(relay.metrics)
                        return status == 200 && body.contains("trellis_store_writable 0")
                    }
                }
                try await cluster.resume()
                for relay in relays {
                    try await eventually("ready again", timeout: .seconds(60)) {
                        try await MetricsTests.get(relay.health).0 == 200
                    }
                }
                try await seen.wait(timeout: .seconds(90), "30 answers") {
                    $0.filter { $0.topic.hasPrefix("rpi/fromrpi/") }.count >= 30
                }
                #expect(await seen.received(on: "trellis/deadletter").isEmpty)

                // Every press counted once, whichever relay took it.
                try await phone.subscribe("p2o/buttons/door/state", qos: .atLeastOnce)
                try await eventually("60 presses", timeout: .seconds(60)) {
                    await seen.received(on: "p2o/buttons/door/state").last?.text?.contains(#""total":60"#) == true
                }
                for relay in relays {
                    try await relay.trellis.waitForOutput("the state store commits again", timeout: .seconds(30))
                    // Loud once per kind of failure, not once per attempt.
                    let lines = relay.trellis.output.split(separator: "\n").filter {
                        $0.contains("the state store cannot commit")
                    }
                    let kinds = lines.compactMap { line in
                        line.split(separator: " ").first { $0.hasPrefix("cause=") }.map(String.init)
                    }
                    #expect(!lines.isEmpty)
                    #expect(Set(kinds).count == kinds.count, "a kind of failure logged twice: \(lines)")
                    #expect(
                        relay.trellis.output.components(separatedBy: "the state store commits again").count - 1 == 1)
                }
                for relay in relays { relay.trellis.process.signal(SIGTERM) }
                for relay in relays { #expect(try await relay.trellis.waitForExit() == 0, "\(relay.trellis.output)") }
                await phone.shutdown()
            }
        }
    }

    @Test("a PostgreSQL server that is down at start is waited for, saying so, and Trellis starts once it answers")
    func startWhileDown() async throws {
        try await OwnPostgresCluster.with { cluster in
            try await withTestBroker { broker in
                try await cluster.halt()
                var environment = ProcessInfo.processInfo.environment
                environment["TRELLIS_STATE_STORE"] = cluster.url.urlWithPassword
                let trellis = try TrellisBinary.start(
                    ["run", "--broker", broker.address, "--state", temporaryDirectory()],
                    environment: environment)
                try await trellis.waitForOutput(
                    "waiting for the PostgreSQL store before starting", timeout: .seconds(60))
                #expect(trellis.output.contains("Connection refused"), "\(trellis.output)")
                #expect(!trellis.output.contains("password"), "no secret in the log")
                #expect(trellis.process.isRunning)
                try await cluster.resume()
                try await trellis.waitForOutput("the PostgreSQL store answers; starting", timeout: .seconds(60))
                try await trellis.waitForOutput("connected to the broker", timeout: .seconds(60))
                #expect(try await trellis.terminate() == 0, "\(trellis.output)")
            }
        }
    }
}
