import Foundation
import Testing
import TrellisBroker
import TrellisMQTT
import TrellisTestSupport

/// 3,000 hostile messages (six of them 1 MiB) on every topic Trellis subscribes to, then normal traffic, against the
/// real `trellis` process: it stays up, its memory stays bounded, every hostile message leaves
/// exactly one dead-letter record, and normal requests are still answered correctly. Three messages
/// past the relay's `--max-packet-bytes` go first: the broker keeps them from the relay (the bound
/// announced on the relay's own connection), so they leave no record and cost it no memory.
@Suite("Hostile input")
struct HostileInputTests {
    /// One hostile message: a topic Trellis subscribes to and a payload it must refuse.
    struct Hostile {
        var topic: String
        var payload: [UInt8]
        var retain: Bool
    }

    static func hostileMessages(count: Int) -> [Hostile] {
        var random = SplitMix(state: 2026)
        let oddLevels = [
            "", " ", "..", "ü", "0x", "0xZZ", "a%2Fb", String(repeating: "x", count: 300), "$SYS", "\u{200B}"
        ]
        return (0..<count).map { index in
            let level = oddLevels[index % oddLevels.count]
            let size = index % 500 == 0 ? 1_048_576 : Int.random(in: 1...512, using: &random)
            var bytes = (0..<size).map { _ in UInt8.random(in: 0...255, using: &random) }
            if index % 3 == 0 { bytes[0] = 0xff } // never valid UTF-8
            bytes[bytes.count - 1] = 0x23 // '#': never a valid id, time, status or sensor report
            let topic: String
            switch index % 7 {
            case 0: topic = "rpi/torpi"
            case 1: topic = "rpi/torpi/\(level)"
            case 2: topic = "rpi/sensors/\(level)"
            case 3: topic = "p2o/buttons/\(level)/press"
            case 4: topic = "p2o/clients/\(level)/status"
            case 5: topic = "p2o/clients/\(level)/register"
            default: topic = "p2o/clients/\(level)/unregister"
            }
            return Hostile(topic: topic, payload: bytes, retain: index % 11 == 0)
        }
    }

    @Test("3,000 hostile messages, then normal traffic")
    func hostileThenNormal() async throws {
        try await withTestBroker { broker in
            let (observer, seen) = try await TestClients.connectCollecting(
                to: broker, "trellis/deadletter", "rpi/fromrpi/#", "p2o/clients/+/register-response")

            let state = temporaryDirectory()
            let trellis = try TrellisBinary.start([
                "run", "--broker", broker.address, "--state", state, "--log-level", "error",
                "--max-packet-bytes", "\(3 * 1_048_576)"
            ])
            let attacker = try await TestClients.connect(to: broker, id: "attacker")
            let hostile = Self.hostileMessages(count: 3_000)
            try await waitUntilOnline(broker)
            let oversized = [UInt8](repeating: 0x23, count: 7 * 1_048_576 / 2)
            for _ in 0..<3 { try attacker.publish(topic: "rpi/torpi/huge", payload: oversized, qos: .atLeastOnce) }
            for message in hostile {
                try attacker.publish(
                    topic: message.topic, payload: message.payload, qos: .atLeastOnce, retain: message.retain)
            }
            try await seen.messages(on: "trellis/deadletter", count: hostile.count, timeout: .seconds(300))
            #expect(trellis.process.isRunning)
            let peak = try #require(Self.memory(of: trellis.process.pid, field: "VmHWM"))
            #expect(peak < 200 * 1024, "peak resident memory \(peak) KiB")

            let phone = "ID:7;sender:phone;receiver:Host-RPI3B+;payload:Fern,0x36;operation:REQ_addNewPlant"
            try await attacker.publishAndWait(topic: "rpi/torpi/phone", payload: Array(phone.utf8))
            try await attacker.publishAndWait(topic: "p2o/clients/app/register", payload: Array("door".utf8))
            let reply = try await seen.messages(on: "rpi/fromrpi/phone")
            #expect(reply[0].text == "ID:7;sender:Host-RPI3B+;receiver:phone;payload:Fern;operation:RES_addNewPlant")
            let registered = try await seen.messages(on: "p2o/clients/app/register-response")
            #expect(registered[0].text == #"{"status":"success"}"#)
            #expect(await seen.received(on: "trellis/deadletter").count == hostile.count)
            let held = broker.log().components(separatedBy: "Dropping too large outgoing PUBLISH for ").count - 1
            #expect(held == 3, "the broker held back \(held) messages from the relay")

            #expect(try await trellis.terminate() == 0)
            await attacker.shutdown()
            await observer.shutdown()
        }
    }

    /// Waits for the retained `trellis/status` = `online`.
    func waitUntilOnline(_ broker: TestBroker) async throws {
        let (watcher, inbox) = try await TestClients.connectCollecting(to: broker, "trellis/status")
        try await inbox.wait(timeout: .seconds(30), "online") { $0.last?.text == "online" }
        await watcher.shutdown()
    }

    /// A `/proc/<pid>/status` memory field, in KiB.
    static func memory(of pid: Int32, field: String) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        let line = text.split(separator: "\n").first { $0.hasPrefix(field + ":") }
        return line.flatMap { Int($0.split(whereSeparator: { $0 == " " || $0 == "\t" })[1]) }
    }
}
