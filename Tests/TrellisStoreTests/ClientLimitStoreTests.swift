import Foundation
import Testing
import TrellisCore
import TrellisTestSupport
@testable import TrellisStore

/// The per-client limits the store keeps in one transaction each: the cap on a client's
/// registrations and the quota of a client's dead letters, on every backend.
@Suite("Client limits in the store")
struct ClientLimitStoreTests {
    @Test(
        "a client registers up to the cap; beyond, nothing changes; renewals and other clients still pass",
        arguments: StoreKind.allCases)
    func registrationCap(_ kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            for index in 0..<5 {
                #expect(
                    try await store.register(client: "c1", button: "b\(index)", at: instant(1), maximumPerClient: 5)
                        != nil)
            }
            #expect(try await store.register(client: "c1", button: "b5", at: instant(2), maximumPerClient: 5) == nil)
            #expect(try await store.client(id: "c1")?.registrations.map(\.button) == (0..<5).map { "b\($0)" })
            // Renewing a registration it holds is no new one.
            _ = try await store.recordPress(button: "b0", at: instant(3), historyLimit: 20)
            let renewed = try #require(
                try await store.register(client: "c1", button: "b0", at: instant(4), maximumPerClient: 5))
            #expect(renewed.button?.total == 1)
            #expect(try await store.register(client: "c2", button: "b5", at: instant(4), maximumPerClient: 5) != nil)
            // After an unregistration there is room again.
            #expect(try await store.unregister(client: "c1", button: "b3"))
            #expect(try await store.register(client: "c1", button: "b9", at: instant(5), maximumPerClient: 5) != nil)
            #expect(try await store.counts().registrations == 6)
        }
    }

    @Test("registrations of one client at once never pass the cap", arguments: StoreKind.allCases)
    func concurrentCap(_ kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            let registered = try await withThrowingTaskGroup(of: Bool.self) { group in
                for index in 0..<60 {
                    group.addTask {
                        try await store.register(
                            client: "racer", button: "b\(index)", at: instant(1), maximumPerClient: 10) != nil
                    }
                }
                return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(registered == 10)
            #expect(try await store.client(id: "racer")?.registrations.count == 10)
        }
    }

    @Test(
        "a client's flood of dead letters evicts only its own oldest; the total stays within the cap",
        arguments: StoreKind.allCases)
    func deadLetterQuota(_ kind: StoreKind) async throws {
        try await withStore(kind, deadLetterLimit: 50) { store async throws in
            try await store.recordDeadLetter(
                reason: "early", topic: "p2o/clients/alice/status", payload: [1], at: instant(0),
                client: "client:alice", quota: 5)
            try await store.recordDeadLetter(reason: "anonymous", topic: "x", payload: [2], at: instant(0))
            for index in 0..<200 {
                try await store.recordDeadLetter(
                    reason: "flood\(index)", topic: "p2o/clients/mallory/status", payload: [3],
                    at: instant(Double(index)), client: "client:mallory", quota: 5)
            }
            let letters = try await store.deadLetters(limit: 100)
            #expect(letters.map(\.reason) == (195..<200).reversed().map { "flood\($0)" } + ["anonymous", "early"])
            // Many clients at their quota: the store's own cap still holds, the newest kept.
            for client in 0..<30 {
                for index in 0..<3 {
                    try await store.recordDeadLetter(
                        reason: "c\(client)-\(index)", topic: "t", payload: [], at: instant(1),
                        client: "client:c\(client)", quota: 5)
                }
            }
            #expect(try await store.counts().deadLetters == 50)
            #expect(try await store.deadLetters(limit: 1).first?.reason == "c29-2")
        }
    }
}
