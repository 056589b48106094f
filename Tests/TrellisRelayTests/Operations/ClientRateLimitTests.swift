import Foundation
import Testing
import TrellisCore
import TrellisRelay
import TrellisTestSupport

/// The per-client rates on the engine over SQLite and PostgreSQL, at stated times: a client over its
/// rate of JSON requests or device messages is refused, others are not, and it recovers once it slows
/// down. With the clock in the test's hands the figures are exact: a burst of 10, 5 a second.
@Suite("Client limits: rates")
struct ClientRateLimitTests {
    static var settings: RelaySettings {
        var settings = RelaySettings()
        settings.requestRate = RateLimit(rate: 5, burst: 10)
        settings.deviceMessageRate = RateLimit(rate: 5, burst: 10)
        return settings
    }

    static let start = Date(timeIntervalSince1970: 1_795_344_000)

    @Test(
        "JSON requests beyond a client's burst are answered rate_limited; another client is served; it recovers",
        arguments: StoreKind.bothStores)
    func requests(kind: StoreKind) async throws {
        try await withRecorder(kind, settings: Self.settings) { relay async throws in
            func ask(_ who: String, at time: Date) async throws -> String {
                let out = await relay.send("{}", on: "trellis/clients/\(who)/request/devices/list", at: time)
                let reply = out.last { $0.topic == "trellis/clients/\(who)/response/devices/list" }
                return try #require(reply?.text, "no reply: \(out)")
            }
            var answers: [String] = []
            for _ in 0..<40 { answers.append(try await ask("alice", at: Self.start)) }
            let ok = answers.filter { $0.contains(#""status":"ok""#) }.count
            let limited = answers.filter { $0.contains(#""code":"rate_limited""#) }
            #expect(ok == 10, "the burst")
            #expect(limited.count == 30)
            #expect(limited.first?.contains("try again in") == true, "\(limited.first ?? "")")
            #expect(try await ask("bob", at: Self.start).contains(#""status":"ok""#))
            // A tenth of a second refills half a request; a second, five.
            #expect(try await ask("alice", at: Self.start.addingTimeInterval(0.1)).contains("rate_limited"))
            let later = Self.start.addingTimeInterval(1.1)
            var served = 0
            for _ in 0..<10 where try await ask("alice", at: later).contains(#""status":"ok""#) { served += 1 }
            #expect(served == 5)
        }
    }

    @Test(
        "device messages beyond a device's burst are dropped, the first of a run dead-lettered; another device is served; it recovers",
        arguments: StoreKind.bothStores)
    func deviceMessages(kind: StoreKind) async throws {
        try await withRecorder(kind, settings: Self.settings) { relay async throws in
            func line(_ device: String, _ text: String, at time: Date) async {
                await relay.send(#"{"type":"Device","message":"\#(text)"}"#, on: "devices/\(device)/log", at: time)
            }
            for index in 0..<40 { await line("chatty", "line \(index)", at: Self.start) }
            await line("calm", "hello", at: Self.start)
            #expect(relay.messages(on: "trellis/logs/calm").count == 1)
            #expect(relay.messages(on: "trellis/logs/chatty").count == 10)
            let limited = relay.texts(on: "trellis/deadletter").filter { $0.contains(#""reason":"rate_limited""#) }
            #expect(limited.count == 1, "one dead letter for the run: \(limited)")
            #expect(limited.first?.contains("devices/chatty/log") == true)
            await line("chatty", "again", at: Self.start.addingTimeInterval(1))
            #expect(relay.texts(on: "trellis/logs/chatty").last?.contains("again") == true)
        }
    }
}
