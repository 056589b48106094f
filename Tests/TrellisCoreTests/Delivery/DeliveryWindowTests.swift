import Testing
import TrellisCore

@Suite("Delivery window: redeliveries told from new messages")
struct DeliveryWindowTests {
    static func mark(_ id: Int, _ payload: String = "") -> DeliveryMark {
        DeliveryMark(packetID: id, topic: "p2o/buttons/door/press", payload: Array(payload.utf8))
    }

    @Test("the same identifier and message on a resumed session is a redelivery")
    func resumedRedelivery() {
        var window = DeliveryWindow(capacity: 8)
        #expect(
            window.admit(Self.mark(1), connection: 1, sessionResumed: false) == .fresh(Self.mark(1), forgetStored: true)
        )
        #expect(
            window.admit(Self.mark(2), connection: 1, sessionResumed: false)
                == .fresh(Self.mark(2), forgetStored: false))
        #expect(window.admit(Self.mark(2), connection: 2, sessionResumed: true) == .redelivery)
        #expect(
            window.admit(Self.mark(3), connection: 2, sessionResumed: true) == .fresh(Self.mark(3), forgetStored: false)
        )
    }

    @Test("a new session forgets every mark: the broker numbers from the start again")
    func newSessionForgets() {
        var window = DeliveryWindow(capacity: 8)
        _ = window.admit(Self.mark(1), connection: 1, sessionResumed: true)
        #expect(
            window.admit(Self.mark(1), connection: 2, sessionResumed: false) == .fresh(Self.mark(1), forgetStored: true)
        )
        #expect(window.remembered == [Self.mark(1)])
    }

    @Test(
        "an identifier met again for another message is not a redelivery",
        arguments: [("", "2026-01-01T00:00:00Z"), ("a", "b")])
    func sameIdentifierOtherMessage(first: String, second: String) {
        var window = DeliveryWindow(capacity: 8)
        _ = window.admit(Self.mark(7, first), connection: 1, sessionResumed: true)
        #expect(
            window.admit(Self.mark(7, second), connection: 1, sessionResumed: true)
                == .fresh(Self.mark(7, second), forgetStored: false))
        #expect(window.admit(Self.mark(7, second), connection: 2, sessionResumed: true) == .redelivery)
    }

    @Test("only the last `capacity` deliveries are remembered, oldest first")
    func capacity() {
        var window = DeliveryWindow(capacity: 3)
        for id in 1...5 { _ = window.admit(Self.mark(id), connection: 1, sessionResumed: true) }
        #expect(window.remembered == [Self.mark(3), Self.mark(4), Self.mark(5)])
        #expect(
            window.admit(Self.mark(2), connection: 1, sessionResumed: true) == .fresh(Self.mark(2), forgetStored: false)
        )
        #expect(window.admit(Self.mark(5), connection: 1, sessionResumed: true) == .redelivery)
    }

    @Test("marks restored from the store catch the redeliveries after a restart")
    func restored() {
        var window = DeliveryWindow(capacity: 4)
        window.restore([Self.mark(10), Self.mark(11)])
        #expect(window.admit(Self.mark(11), connection: 1, sessionResumed: true) == .redelivery)
        #expect(
            window.admit(Self.mark(12), connection: 1, sessionResumed: true)
                == .fresh(Self.mark(12), forgetStored: false))
        #expect(window.remembered == [Self.mark(10), Self.mark(11), Self.mark(12)])
    }

    @Test("the fingerprint is FNV-1a over topic, a zero byte and payload")
    func fingerprint() {
        #expect(DeliveryMark.fingerprint(topic: "", payload: []) == 0xaf63_bd4c_8601_b7df)
        #expect(
            DeliveryMark.fingerprint(topic: "a", payload: [])
                != DeliveryMark.fingerprint(topic: "", payload: Array("a".utf8)))
    }
}
