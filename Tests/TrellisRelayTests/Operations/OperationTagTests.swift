import Testing
@testable import TrellisRelay

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
        (";operation:RES_x", nil),
        ("ID:1;sender:Host;receiver:phone;payload:7", nil),
        ("{\"id\":1}", nil),
        ("ID:", nil),
        ("", nil),
    ]

    @Test("the tag is the rest after the last ;operation:, for plant messages only", arguments: cases.indices)
    func tag(index: Int) {
        let (wire, expected) = Self.cases[index]
        let tag = RelayEngine.operationTag(of: Array(wire.utf8)).map { String(decoding: $0, as: UTF8.self) }
        #expect(tag == expected, "\(wire)")
    }
}
