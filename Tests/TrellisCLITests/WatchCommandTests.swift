import Foundation
import Testing
import TrellisBroker
import TrellisCore
import TrellisTestSupport

/// `trellis watch` in a terminal (tmux) and `trellis trace`, against `trellis run` with its own
/// broker receiving the README's tour and a set of bad messages: each message decoded, its verdict,
/// its reply linked to it, on the screen a person would see; `--json` field by field.
@Suite("trellis watch and trellis trace, against the README's tour", .serialized)
struct WatchCommandTests {
    /// A relay started by `trellis run` on a free port, with its local operator's login.
    struct Relay {
        var directory: String
        var port: Int
        var trellis: TrellisBinary
        /// The shell prefix that logs Mosquitto's clients and `trellis` in as the local operator.
        var login: String {
            "export XDG_CONFIG_HOME=\(directory)/state/mosquitto-clients TRELLIS_STATE_DIR=\(directory)/state; "
        }

        /// Starts a shell command line as the operator (it replaces the shell).
        func start(_ command: String) throws -> TrellisBinary {
            try TrellisBinary.start(["-c", login + "exec " + command], executable: "/bin/sh")
        }

        /// Runs a shell command line as the operator and returns what it printed.
        func shell(_ command: String) async throws -> String {
            let shell = try TrellisBinary.start(["-c", login + command], executable: "/bin/sh")
            let status = try await shell.waitForExit(timeout: .seconds(40))
            #expect(status == 0, "\(command) exited with \(status): \(shell.output)")
            return shell.output
        }

        func publish(_ topic: String, _ payload: String) async throws {
            _ = try await shell("mosquitto_pub -h 127.0.0.1 -p \(port) -q 1 -t '\(topic)' -m '\(payload)'")
        }
    }

    static func withRelay(_ body: (Relay) async throws -> Void) async throws {
        let directory = temporaryDirectory()
        let (trellis, _, port) = try await TrellisBinary.startOwningBroker(in: directory)
        var failure: (any Error)?
        do {
            try await body(Relay(directory: directory, port: port, trellis: trellis))
        } catch {
            failure = error
        }
        #expect(try await trellis.terminate() == 0)
        if let failure { throw failure }
    }

    /// The bad messages after the tour: a status that is no status, a plant request whose payload
    /// is not UTF-8, a JSON request that is not JSON, a press of a button id no topic can hold.
    static let badMessages: [(topic: String, payload: String)] = [
        ("p2o/clients/operator/status", "maybe"),
        ("rpi/torpi/operator", "ID:9;sender:operator;receiver:Host-RPI3B+;payload;operation:REQ_numPlants"),
        ("trellis/request/devices/list", "{not json"),
        ("rpi/sensors/0x36", "\u{1B}]0;owned\u{07}")
    ]

    @Test("in a terminal: the tour and the bad messages, each decoded with its verdict and its reply")
    func terminal() async throws {
        try await Self.withRelay { relay in
            let watch = "\(TrellisBinary.path) watch --broker 127.0.0.1:\(relay.port)"
            let screen = try await TerminalScreen.start(relay.login + "exec " + watch)
            defer { Task { await screen.close() } }
            try await screen.waitFor("trellis watch: watching relay ")

            let tour = try ReadmeTour(markdown: MarkdownDocument(path: "README.md").text)
            for step in tour.steps { _ = try await relay.shell(step.command(port: relay.port, timeoutSeconds: 10)) }
            for bad in Self.badMessages { try await relay.publish(bad.topic, bad.payload) }

            // The tour's plant requests: decoded, answered or refused, each reply under its request.
            // A reading must be JSON: the escape sequence is refused, and shown as spaces.
            let last = "sensor 0x36  reading of 0x36:  ]0;owned   → dead_letter invalid_json"
            do {
                try await screen.waitFor(last)
            } catch {
                Issue.record("the screen never showed \(last):\n\(try await screen.text())")
                throw error
            }
            let text = try await screen.text()
            for line in [
                "plant operator  REQ_addNewPlant #1 from operator: Fern,0x36  → answered",
                "    ↳ rpi/fromrpi/operator  RES_addNewPlant #1 from Host-RPI3B+: Fern",
                "    ↳ homeassistant/…  4 discovery configs",
                "plant operator  REQ_plantSensorData #2 from operator: Fern  → answered",
                "plant operator  REQ_numPlants #3 from operator: 12:30  → error ERR_missingKeys",
                "    ↳ rpi/fromrpi/operator  ERR_missingKeys #3 from Host-RPI3B+: ID:3;sender:operator;",
                "buttons operator  register of operator: door  → answered",
                "    ↳ p2o/clients/operator/register-response  success",
                "buttons  press of door, to 1 client  → handled",
                "    ↳ p2o/clients/operator/button-press  door",
                "buttons operator  status of operator: maybe  → dead_letter invalid_status",
                "plant operator  REQ_numPlants #9 from operator  → error ERR_missingVals",
                "devices  devices/list  → error invalid_json",
                "catalog  catalog/get  → answered"
            ] {
                #expect(text.contains(line), "the screen lacks \(line):\n\(text)")
            }
            // Colours on a terminal; the payload's escape sequences never reach it.
            let coloured = try await screen.text(colours: true)
            #expect(coloured.contains("\u{1B}[32manswered"), "no colour on the terminal")
            #expect(!coloured.contains("]0;owned\u{07}"))
        }
    }

    @Test("--json: one event per line, each field as documented; trace finds a request by its ID")
    func json() async throws {
        try await Self.withRelay { relay in
            let events = relay.directory + "/events.jsonl"
            let watcher = try relay.start(
                "\(TrellisBinary.path) watch --broker 127.0.0.1:\(relay.port) --json --count 2 "
                    + "service:plant client:operator > \(events)")
            try await watcher.waitForOutput("watching relay ")
            // Another client's request is left out by the filter; the operator's two are printed.
            try await relay.publish(
                "rpi/torpi", "ID:40;sender:ann;receiver:Host-RPI3B+;payload:;operation:REQ_numPlants")
            let request = "ID:41;sender:operator;receiver:Host-RPI3B+;payload:Fern%3Bx,0x36;operation:REQ_addNewPlant"
            try await relay.publish("rpi/torpi/operator", request)
            try await relay.publish(
                "rpi/torpi/operator", "ID:42;sender:operator;receiver:Host-RPI3B+;payload:;operation:REQ_x")
            #expect(try await watcher.waitForExit(timeout: .seconds(30)) == 0)
            let lines = try String(contentsOfFile: events, encoding: .utf8).split(separator: "\n")
            let objects = try lines.map {
                try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
            }
            #expect(objects.count == 2, "\(lines)")
            let first = try #require(objects.first)
            #expect(first["service"] as? String == "plant")
            #expect(first["client"] as? String == "operator")
            #expect(first["request"] as? String == "41")
            #expect(first["topic"] as? String == "rpi/torpi/operator")
            #expect(first["verdict"] as? String == "answered")
            #expect((first["fields"] as? [String: String])?["payload"] == "Fern;x,0x36")
            #expect(first["payload"] as? String == request)
            #expect(first["qos"] as? Int == 1 && first["retain"] as? Bool == false)
            let replies = try #require(first["replies"] as? [[String: String]])
            #expect(replies.first?["topic"] == "rpi/fromrpi/operator")
            #expect(replies.first?["summary"] == "RES_addNewPlant #41 from Host-RPI3B+: Fern;x")
            #expect((first["relay"] as? String)?.hasPrefix("trellis-") == true)
            let second = try #require(objects.last)
            #expect(
                second["verdict"] as? String == "error" && second["reason"] as? String == "ERR_invalidOpTag",
                "\(second)")
            #expect((second["seq"] as? Int ?? 0) > (first["seq"] as? Int ?? .max))

            // The trace of request 41, and of an ID nothing kept names.
            let trace = try await relay.shell("\(TrellisBinary.path) trace 41 --broker 127.0.0.1:\(relay.port)")
            #expect(trace.contains("REQ_addNewPlant #41 from operator: Fern;x,0x36  → answered"), "\(trace)")
            #expect(trace.contains("↳ rpi/fromrpi/operator  RES_addNewPlant #41"), "\(trace)")
            // Request 42 was refused and kept as the store's first dead letter: traced by that letter.
            let letter = try await relay.shell(
                "\(TrellisBinary.path) trace --dead-letter 1 --broker 127.0.0.1:\(relay.port)")
            #expect(letter.contains("REQ_x #42 from operator  → error ERR_invalidOpTag"), "\(letter)")
            let missing = try relay.start(
                "\(TrellisBinary.path) trace nobody-sent-this --broker 127.0.0.1:\(relay.port)")
            #expect(try await missing.waitForExit() == 1)
            #expect(missing.output.contains("nothing relay trellis-"), "\(missing.output)")
        }
    }

    @Test("the stream is the operators': with an operator watching, an anonymous subscriber to it gets nothing")
    func notOperator() async throws {
        try await Self.withRelay { relay in
            // An operator watches, so the relay streams.
            let watch = "\(TrellisBinary.path) watch --broker 127.0.0.1:\(relay.port) --color never"
            let operatorWatch = try relay.start(watch)
            try await operatorWatch.waitForOutput("watching relay ")
            // No login and no options file: the released app's rights on the same broker.
            let anonymous = try TrellisBinary.start(
                [
                    "-c",
                    "exec env -u XDG_CONFIG_HOME HOME=\(relay.directory)/nobody stdbuf -oL mosquitto_sub -d -h 127.0.0.1 "
                        + "-p \(relay.port) -t trellis/watch/events -t trellis/watch/relays/+ -W 15"
                ], executable: "/bin/sh")
            try await anonymous.waitForOutput("received SUBACK")
            try await relay.publish(
                "rpi/torpi/operator", "ID:50;sender:operator;receiver:Host-RPI3B+;payload:;operation:REQ_numPlants")
            // The operator's watch shows the request; the anonymous subscriber, subscribed before it, got nothing.
            try await operatorWatch.waitForOutput("REQ_numPlants #50 from operator")
            let trace = try await relay.shell("\(TrellisBinary.path) trace 50 --broker 127.0.0.1:\(relay.port)")
            #expect(trace.contains("#50"))
            #expect(!anonymous.output.contains("REQ_numPlants"), "\(anonymous.output)")
            #expect(!anonymous.output.contains("PUBLISH"), "\(anonymous.output)")
            _ = try? await anonymous.terminate()
            _ = try? await operatorWatch.terminate()
        }
    }

    @Test("hostile watch requests: an anonymous one goes nowhere, garbage is logged, 1e308 s is 300 s")
    func hostileRequests() async throws {
        try await Self.withRelay { relay in
            let replies = try relay.start(
                "stdbuf -oL mosquitto_sub -d -h 127.0.0.1 -p \(relay.port) -t 'trellis/watch/relays/+' -W 30")
            try await replies.waitForOutput("received SUBACK")
            // The released app's rights: the broker takes its publish and passes it to no one.
            _ = try await relay.shell(
                "env -u XDG_CONFIG_HOME HOME=\(relay.directory)/nobody mosquitto_pub -h 127.0.0.1 -p \(relay.port) "
                    + "-q 1 -t trellis/watch/request -m '{\"seconds\":300}'")
            for garbage in ["{not json", "{\"seconds\":\"forever\"}", "{\"seconds\":0}"] {
                try await relay.publish("trellis/watch/request", garbage)
            }
            let asked = Date()
            try await relay.publish("trellis/watch/request", "{\"seconds\":1e308}")
            try await replies.waitForOutput("\"until\"")
            let warning = "a watch request that is not {\"seconds\":N}"
            try await relay.trellis.waitForOutput(warning)
            let deadline = ContinuousClock.now + .seconds(10)
            while relay.trellis.output.components(separatedBy: warning).count < 4, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(relay.trellis.output.components(separatedBy: warning).count == 4, "\(relay.trellis.output)")
            // One reply: to the operator's last request, its stream capped at 300 s.
            let lines = replies.output.split(separator: "\n").filter { $0.hasPrefix("{") }
            #expect(lines.count == 1, "\(replies.output)")
            struct Reply: Decodable { var until: String }
            let reply = try JSONDecoder().decode(Reply.self, from: Data(try #require(lines.first).utf8))
            let until = try #require(ISO8601Time.parse(reply.until), "\(reply.until)")
            #expect(until.timeIntervalSince(asked) <= 301 && until.timeIntervalSince(asked) >= 290, "\(reply.until)")
            _ = try? await replies.terminate()
        }
    }
}
