import Foundation
import Testing
import TrellisBroker
import TrellisMQTT
import TrellisTestSupport

/// Mosquitto hands a client id to whoever connects with it last: the earlier connection is closed
/// and, with a clean start of false, its session goes to the newcomer. In the default LAN profile
/// anyone may connect, so Trellis's id must be one nobody can guess or read.
extension LANProfileAttackTests {
    /// The released app's one request, numbered `id`, from `sender`.
    static func numPlants(_ id: Int, sender: String = "me") -> [UInt8] {
        Array("ID:\(id);sender:\(sender);receiver:Host-RPI3B+;payload:;operation:REQ_numPlants".utf8)
    }

    /// The id kept in `state`, nil when there is no file.
    static func keptClientID(in state: String) -> String? {
        (try? String(contentsOfFile: state + "/client-id", encoding: .utf8))?.trimmingCharacters(
            in: .whitespacesAndNewlines)
    }

    @Test("an anonymous client connecting with Trellis's old id or a guess of its new one knocks nothing off")
    func clientIDTakeover() async throws {
        try await withDefaultProfile { port, state, _, trellis in
            // The suite's earlier attacks wrote to the same output and log: this one reads what follows.
            let brokerLog = state + "/mosquitto.log"
            let readLog = { (try? String(contentsOfFile: brokerLog, encoding: .utf8)) ?? "" }
            let (outputBefore, logBefore) = (trellis.output.count, readLog().count)
            let kept = Self.keptClientID(in: state)
            #expect(
                kept?.wholeMatch(of: /trellis-[A-Za-z0-9]{16,}/) != nil,
                "a random id is kept in the state directory: \(kept ?? "none")")
            let mode =
                (try? FileManager.default.attributesOfItem(atPath: state + "/client-id"))?[.posixPermissions] as? Int
            #expect(mode == 0o600)

            let app = try await Self.connect(port: port)
            let inbox = await MessageCollector.collecting(app)
            try await app.subscribe("rpi/fromrpi")
            let guesses = ["trellis", "trellis-1", "trellis-trellis", "trellis-relay", "Host-RPI3B+"]
            for (round, guess) in guesses.enumerated() {
                // The attacker asks for the session too (clean start false, a long expiry), and would
                // fight back for the id if it lost it.
                let attacker = try MQTTClient(
                    configuration: MQTTConfiguration(
                        host: "127.0.0.1", port: port, clientID: guess, cleanStart: false, sessionExpiry: 3600,
                        reconnectDelay: 0.1...0.2))
                DefaultDeployment.clients?.add(attacker)
                attacker.start()
                try await attacker.waitUntilConnected(timeout: .seconds(20))
                try await app.publishAndWait(topic: "rpi/torpi", payload: Self.numPlants(round + 1, sender: "takeover"))
                try await inbox.messages(on: "rpi/fromrpi", count: round + 1, timeout: .seconds(20))
                #expect(attacker.isConnected, "\(guess) kept its connection: nobody else holds that id")
                await attacker.shutdown()
            }
            let output = String(trellis.output.dropFirst(outputBefore))
            #expect(!output.contains("lost the broker connection"), "the relay stayed connected: \(output)")
            let log = String(readLog().dropFirst(logBefore))
            #expect(!log.contains("already connected, closing old connection"), "no connection was taken over: \(log)")
            await app.shutdown()
        }
    }

    @Test("the generated id survives a restart with its session; broker.client_id names another")
    func clientIDKept() async throws {
        let directory = temporaryDirectory()
        let state = directory + "/state"
        // The first start picks the port; the restarts keep its configuration, and so the broker's session.
        var config: String?
        var ids: [String?] = []
        for extra in [[], [], ["--client-id", "trellis"]] {
            let trellis: TrellisBinary
            if let config {
                trellis = try TrellisBinary.start(
                    ["run", "--broker-config", config, "--state", state] + extra, in: directory)
                do {
                    try await trellis.waitForOutput("connected to the broker", timeout: .seconds(60))
                } catch {
                    trellis.process.signal(SIGKILL)
                    throw error
                }
            } else {
                (trellis, config, _) = try await TrellisBinary.startOwningBroker(in: directory, extra)
            }
            ids.append(Self.keptClientID(in: state))
            if ids.count == 2 {
                #expect(
                    trellis.output.contains("session_present=true"),
                    "the second start resumes the session: \(trellis.output)")
            }
            #expect(try await trellis.terminate() == 0)
        }
        let first = try #require(ids[0])
        #expect(ids == [first, first, first], "made once, read back, left alone by --client-id")
        let log = try String(contentsOfFile: state + "/mosquitto.log", encoding: .utf8)
        #expect(log.components(separatedBy: " as \(first) ").count == 3, "the broker saw the kept id twice: \(log)")
        #expect(log.contains(" as trellis "), "--client-id trellis is used as given")
    }
}
