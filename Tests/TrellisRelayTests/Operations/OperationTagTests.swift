import Testing
@testable import TrellisRelay
import TrellisMQTTTypes

/// The operation tag the counters file each reply under (`trellis_replies_total{operation}`), read
/// from the reply's wire form: the value after the last `;operation:`, or none.
@Suite("A reply's operation tag")
struct OperationTagTests {
    static let cases: [(wire: String, tag: String?)] = [
        ("ID:1;sender:Host;receiver:phone;payload:7;operation:RES_numPlants", "RES_numPlants"),
        ("ID:1;sender:Host;receiver:phone;payload:;operation:ERR_hashLength", "ERR_hashLength"),
        ("ID:1;sender:Host;receiver:phone;payload:a%3Boperation%3Ax;operation:RES_getPlantName", "RES_getPlantName"),
        ("ID:1;sender:Host;receiver:phone;payload:x;operation:", ""),
        ("ID:;operation:RES_x;operation:RES_y", "RES_y"),
        ("ID:1;operation:RES_x;y", "RES_x;y"),
        ("ID:1;operation:RES_x;y;operation:RES_y", "RES_y"),
        (";operation:RES_x", nil),
        ("x;operation:RES_numPlants", nil),
        ("ID;operation:RES_numPlants", nil),
        ("ID:1;sender:Host;receiver:phone;payload:7", nil),
        ("{\"id\":1}", nil),
        ("ID:", nil),
        ("", nil)
    ]

    @Test("the tag is the rest after the last ;operation:, for plant messages only", arguments: cases.indices)
    func tag(index: Int) {
        let (wire, expected) = Self.cases[index]
        let tag = RelayEngine.operationTag(of: Array(wire.utf8)).map { String(decoding: $0, as: UTF8.self) }
        #expect(tag == expected, "\(wire)")
    }

    @Test("the counters file each reply under that tag, whichever reply came before it", arguments: cases.indices)
    func counted(index: Int) {
        // Every other case before and after this one: the counters compare a reply's end with the
        // tag they counted last before they look for its tag.
        for other in Self.cases.indices {
            let counters = RelayCounters()
            let wires = [Self.cases[other].wire, Self.cases[index].wire, Self.cases[index].wire, Self.cases[other].wire]
            counters.routed(
                service: "plant",
                publishes: wires.map { MQTTMessage(topic: "t", payload: Array($0.utf8), qos: .atMostOnce) })
            var expected: [String: Int] = [:]
            for wire in wires {
                if let tag = Self.cases.first(where: { $0.wire == wire })?.tag { expected[tag, default: 0] += 1 }
            }
            #expect(
                counters.snapshot().replies == expected, "\(Self.cases[other].wire) around \(Self.cases[index].wire)")
        }
    }
}
