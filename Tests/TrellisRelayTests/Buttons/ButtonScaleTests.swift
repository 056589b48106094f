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

    /// The state written in one transaction, as `trellis store copy` writes one: b0…b9999 pressed once;
    /// c0…c99 online and registered for b0, c100…c149 offline and registered for b0, c150…c999 online and
    /// registered for one other button each. (Written through the operations one by one, its 12,000 writes
    /// were the longest part of the suite on PostgreSQL.)
    static func fill(_ store: any TrellisStore, at then: Date) async throws {
        let importing = try #require(store as? any StateImporting)
        var dump = try await importing.exportState()
        let at = DumpValue.integer(Int64(then.timeIntervalSince1970 * 1000))
        func add(_ table: String, _ values: [String: DumpValue]) throws {
            let index = try #require(dump.tables.firstIndex { $0.name == table })
            dump.tables[index].rows.append(dump.tables[index].columns.map { values[$0] ?? .null })
        }
        for index in 0..<10_000 {
            try add("button", ["id": .text("b\(index)"), "total": .integer(1)])
            try add("button_press", ["id": .integer(Int64(index + 1)), "button_id": .text("b\(index)"), "at": at])
        }
        for index in 0..<1_000 {
            let online = (100..<150).contains(index) ? 0 : 1
            try add("client", ["id": .text(client(index)), "online": .integer(Int64(online)), "status_at": at])
            try add(
                "registration",
                [
                    "button_id": .text(index < 150 ? "b0" : "b\(index - 149)"), "client_id": .text(client(index)),
                    "missed": .integer(0), "registered_at": at
                ])
        }
        try await importing.importState(dump, replacing: true)
    }

    @Test(
        "with 10,000 buttons and 1,000 clients in the state, one press reaches its 100 registered online clients",
        arguments: StoreKind.bothStores)
    func fanOutToHundred(_ kind: StoreKind) async throws {
        try await withRecorder(kind) { relay async throws in
            let store = relay.store
            let then = Date(timeIntervalSince1970: 1_795_000_000)
            try await Self.fill(store, at: then)

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
