import Foundation
import Testing
import TrellisCore
import TrellisMQTT
import TrellisRelay
import TrellisStore
import TrellisTestSupport

/// The state at the size the service is built for: 10,000 buttons, 1,000 clients, 100 clients
/// registered for one button; the fan-out's decisions on the engine over each store.
@Suite("Buttons: scale", .serialized)
struct ButtonScaleTests {
    static func client(_ index: Int) -> String { "c\(index)" }

    /// Runs `body` for each of `indices`, at most 50 at once.
    static func inBatches(
        _ indices: Range<Int>, _ body: @escaping @Sendable (Int) async throws -> Void
    ) async throws {
        for start in stride(from: indices.lowerBound, to: indices.upperBound, by: 50) {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in start..<min(start + 50, indices.upperBound) { group.addTask { try await body(index) } }
                try await group.waitForAll()
            }
        }
    }

    @Test(
        "with 10,000 buttons and 1,000 clients in the state, one press reaches its 100 registered online clients",
        arguments: StoreKind.bothStores)
    func fanOutToHundred(_ kind: StoreKind) async throws {
        try await withRecorder(kind) { relay async throws in
            let store = relay.store
            let then = Date(timeIntervalSince1970: 1_795_000_000)
            // Written 50 at a time: one by one, PostgreSQL's round trips make the state alone take minutes.
            try await Self.inBatches(0..<10_000) { index in
                _ = try await store.recordPress(button: "b\(index)", at: then, historyLimit: 20)
            }
            // c0…c99 online and registered for b0; c100…c149 offline and registered for b0;
            // c150…c999 online and registered for one other button each.
            try await Self.inBatches(0..<1_000) { index in
                try await store.setClientStatus(
                    client: Self.client(index), online: !(100..<150).contains(index), at: then)
                let button = index < 150 ? "b0" : "b\(index - 149)"
                _ = try await store.register(client: Self.client(index), button: button, at: then)
            }

            let started = ContinuousClock.now
            await relay.press("b0", at: 1)
            let elapsed = ContinuousClock.now - started
            // A press of b1 goes to c150 alone.
            await relay.press("b1", at: 2)
            #expect(relay.texts(on: "p2o/clients/c150/button-press") == ["b1"])

            let deliveries = (0..<1_000).flatMap { relay.messages(on: "p2o/clients/\(Self.client($0))/button-press") }
                .filter { $0.topic != "p2o/clients/c150/button-press" }
            #expect(deliveries.count == 100)
            #expect(
                Set(deliveries.map(\.topic)) == Set((0..<100).map { "p2o/clients/\(Self.client($0))/button-press" }))
            #expect(deliveries.allSatisfy { $0.text == "b0" })
            #expect(try await store.button(id: "b0")?.total == 2)
            #expect(try await store.button(id: "b9999")?.total == 1)
            #expect(try await store.client(id: "c120")?.registrations == [.init(button: "b0", missed: 1)])
            #expect(try await store.client(id: "c99")?.registrations == [.init(button: "b0", missed: 0)])
            print("one press fanned out to 100 clients in \(elapsed) on \(kind)")
        }
    }
}
