import Testing
import TrellisCore
import TrellisMQTTTypes

/// The id a bridge carries on each message, read back as written, and the receiver's memory of the
/// ids it let through: a copy dropped, the oldest forgotten past the capacity.
@Suite("Bridge message ids")
struct BridgeMessageIDTests {
    @Test("an id reads back as written; an origin with slashes and colons keeps them")
    func roundTrip() {
        let id = BridgeMessageID(
            origin: BridgeMessageID.origin(relay: "home/r1", bridge: "cloud", state: "3f9a1c2b0d4e"), sequence: 42)
        #expect(id.text == "home/r1:cloud@3f9a1c2b0d4e/42")
        #expect(BridgeMessageID(text: id.text) == id)
        #expect(id.isFrom(relay: "home/r1") && !id.isFrom(relay: "home/r"))
    }

    @Test("values that are not ids", arguments: ["", "42", "/42", "cloud/", "cloud/x", "cloud/4 2"])
    func notIDs(text: String) {
        #expect(BridgeMessageID(text: text) == nil)
    }

    @Test("a value longer than the bound is not an id: an upstream publisher cannot fill the state with huge ones")
    func tooLong() {
        let origin = String(repeating: "x", count: BridgeMessageID.maxLength)
        #expect(BridgeMessageID(text: "\(origin)/1") == nil)
        #expect(BridgeMessageID(text: "\(origin.dropFirst(2))/1") != nil)
    }

    @Test("a copy is dropped; past the capacity the oldest is forgotten and may pass again")
    func seen() {
        var seen = SeenBridgeIDs(capacity: 3)
        let ids = (1...4).map { BridgeMessageID(origin: "r:cloud", sequence: Int64($0)) }
        // ids[3] forgets ids[0], which then passes again and forgets ids[1].
        let order = [0, 1, 2, 1, 3, 0, 2, 3, 1]
        var admitted: [Bool] = []
        for index in order { admitted.append(seen.admit(ids[index])) }
        #expect(admitted == [true, true, true, false, true, true, false, false, true])
    }

    @Test("ids remembered from the store are copies from the start; of more than the capacity, the newest")
    func remembering() {
        let ids = (1...5).map { BridgeMessageID(origin: "r:cloud", sequence: Int64($0)) }
        var seen = SeenBridgeIDs(capacity: 3, remembering: ids)
        // 3, 4 and 5 are known; 1 and 2, older than the capacity, pass (and forget 3, then 4).
        #expect([4, 2, 3, 0, 1].map { seen.admit(ids[$0]) } == [false, false, false, true, true])
        #expect(seen.admit(ids[4]) == false && seen.admit(ids[2]) == true)
    }
}

extension BridgeMessageIDTests {
    @Test("an arrival: without an id carried; from this relay's own bridge a loop; a second time a copy")
    func arrivals() {
        var seen = SeenBridgeIDs()
        func id(_ origin: String, _ sequence: Int) -> [UserProperty] {
            [UserProperty("other", "x"), UserProperty(BridgeMessageID.property, "\(origin)/\(sequence)")]
        }
        let arrivals = [
            [], [UserProperty(BridgeMessageID.property, "garbage")], id("office:cloud", 1), id("office:cloud", 1),
            id("office:cloud", 2), id("home:cloud", 1)
        ].map { seen.arrival(of: $0, relay: "home") }
        #expect(arrivals == [.carry, .carry, .carry, .copy, .carry, .loop])
    }
}
