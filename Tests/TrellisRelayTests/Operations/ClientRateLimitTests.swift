import Foundation
import Testing
import TrellisCore
import TrellisMQTT
import TrellisRelay
import TrellisTestSupport

/// The per-client rates through a real broker and relay: a client over its rate of JSON requests
/// or device messages is refused, others are not, and it recovers once it slows down.
@Suite("Client limits: rates through the broker", .serialized)
struct ClientRateLimitTests {
    static var settings: RelaySettings {
        var settings = RelaySettings()
        settings.requestRate = RateLimit(rate: 5, burst: 10)
        settings.deviceMessageRate = RateLimit(rate: 5, burst: 10)
        return settings
    }

    @Test("JSON requests beyond a client's burst are answered rate_limited; another client is served; it recovers")
    func requests() async throws {
        try await withRelay(settings: Self.settings) { relay in
            let (client, inbox) = try await relay.connectCollecting("trellis/clients/+/response/#")
            func ask(_ who: String) async throws -> String {
                let topic = "trellis/clients/\(who)/response/devices/list"
                let before = await inbox.received(on: topic).count
                try await client.publishAndWait(
                    topic: "trellis/clients/\(who)/request/devices/list", payload: Array("{}".utf8))
                return try await inbox.messages(on: topic, count: before + 1, timeout: .seconds(20))[before].text ?? ""
            }
            var answers: [String] = []
            for _ in 0..<40 { answers.append(try await ask("alice")) }
            let ok = answers.filter { $0.contains(#""status":"ok""#) }.count
            let limited = answers.filter { $0.contains(#""code":"rate_limited""#) }
            #expect(ok >= 10 && ok < 40, "\(ok) answered ok")
            #expect(limited.count == 40 - ok)
            #expect(limited.first?.contains("try again in") == true, "\(limited.first ?? "")")
            #expect(try await ask("bob").contains(#""status":"ok""#))
            try await eventually("alice is served again", timeout: .seconds(30)) {
                try await ask("alice").contains(#""status":"ok""#)
            }
        }
    }

    @Test(
        "device messages beyond a device's burst are dropped, the first of a run dead-lettered; another device is served; it recovers"
    )
    func deviceMessages() async throws {
        try await withRelay(settings: Self.settings) { relay in
            let (client, inbox) = try await relay.connectCollecting("trellis/logs/+", "trellis/deadletter")
            func line(_ device: String, _ text: String) async throws {
                try await client.publishAndWait(
                    topic: "devices/\(device)/log",
                    payload: Array(#"{"type":"Device","message":"\#(text)"}"#.utf8))
            }
            for index in 0..<40 { try await line("chatty", "line \(index)") }
            try await line("calm", "hello")
            try await inbox.wait(timeout: .seconds(20), "calm's line") {
                $0.contains { $0.topic == "trellis/logs/calm" }
            }
            let streamed = await inbox.received(on: "trellis/logs/chatty").count
            #expect(streamed >= 10 && streamed < 40, "\(streamed) lines streamed")
            let limited = await inbox.received(on: "trellis/deadletter").filter {
                $0.text?.contains(#""reason":"rate_limited""#) == true
            }
            #expect(limited.count >= 1 && limited.count <= 40 - streamed, "\(limited.count) dead letters")
            #expect(limited.first?.text?.contains("devices/chatty/log") == true)
            // One line at a time, each given half a second to come through before the next, within 30 s:
            // on a loaded machine the relay works through every attempt queued ahead of an admitted one.
            try await eventually("chatty is served again", timeout: .seconds(30)) {
                try await line("chatty", "again")
                let served = try? await inbox.wait(timeout: .milliseconds(500), "chatty's line again") {
                    $0.contains { $0.topic == "trellis/logs/chatty" && $0.text?.contains("again") == true }
                }
                return served != nil
            }
        }
    }
}
