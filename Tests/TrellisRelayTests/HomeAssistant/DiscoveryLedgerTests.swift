import Testing
import TrellisCore
@testable import TrellisRelay

/// The ledger keeps things and signatures, not topics: what it clears is rebuilt from the
/// discovery each thing was published under.
struct DiscoveryLedgerTests {
    let home = HomeAssistantDiscovery()
    let moved = HomeAssistantDiscovery(prefix: "ha2")

    @Test func publishedOnceUntilTheSignatureChanges() {
        let ledger = DiscoveryLedger()
        #expect(ledger.needs(.plant(1), signature: "Fern", under: home))
        #expect(ledger.claim(.plant(1), signature: "Fern", under: home))
        #expect(!ledger.needs(.plant(1), signature: "Fern", under: home))
        #expect(!ledger.claim(.plant(1), signature: "Fern", under: home), "claimed once")
        #expect(ledger.needs(.plant(1), signature: "Basil", under: home))
        #expect(ledger.needs(.plant(1), signature: "Fern", under: moved))
        #expect(ledger.claim(.plant(1), signature: "Basil", under: home), "a new signature is claimed again")
        #expect(!ledger.needs(.plant(1), signature: "Basil", under: home))
        #expect(ledger.needs(.plant(1), signature: "Fern", under: home))
        #expect(ledger.count == 1)
        #expect(ledger.remove(.plant(1), under: home))
        #expect(!ledger.remove(.plant(1), under: home))
        #expect(ledger.count == 0)
    }

    @Test func clearingEverythingRebuildsEachDiscoverysTopics() {
        let ledger = DiscoveryLedger()
        _ = ledger.claim(.trellis, signature: "", under: home)
        _ = ledger.claim(.button("hall"), signature: "", under: home)
        _ = ledger.claim(.button("hall"), signature: "", under: moved)
        #expect(ledger.count == 3)
        let expected =
            (home.topics(of: .trellis) + home.topics(of: .button("hall")) + moved.topics(of: .button("hall"))).sorted()
        #expect(ledger.removeAll() == expected)
        #expect(ledger.count == 0)
        #expect(ledger.removeAll().isEmpty)

        _ = ledger.claim(.device("pump"), signature: "x", under: home)
        ledger.forgetAll()
        #expect(ledger.needs(.device("pump"), signature: "x", under: home))
    }
}
