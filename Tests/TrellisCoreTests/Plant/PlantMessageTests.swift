import Testing
@testable import TrellisCore

@Suite("PlantMessage")
struct PlantMessageTests {
    @Test(
        "encoded() writes the five fields in order with an encoded payload",
        arguments: [
            (
                PlantMessage(
                    id: "0", sender: "Host-RPI3B+", receiver: "Bob's iPhone", payload: "3", operation: "RES_numPlants"),
                "ID:0;sender:Host-RPI3B+;receiver:Bob's iPhone;payload:3;operation:RES_numPlants"
            ),
            (
                PlantMessage(id: "1", sender: "a", receiver: "b", payload: "", operation: "RES_x"),
                "ID:1;sender:a;receiver:b;payload:;operation:RES_x"
            ),
            (
                PlantMessage(id: "1", sender: "a", receiver: "b", payload: "10:30; 5%", operation: "RES_x"),
                "ID:1;sender:a;receiver:b;payload:10%3A30%3B 5%25;operation:RES_x"
            )
        ])
    func encoded(_ message: PlantMessage, _ expected: String) {
        #expect(message.encoded() == expected)
        #expect(message.description == expected)
        #expect(message.encodedBytes() == Array(expected.utf8))
    }

    @Test("log summaries shorten long payloads only")
    func logSummary() {
        var message = PlantMessage(
            id: "1", sender: "Bob", receiver: "H", payload: "short", operation: "REQ_deletePlant")
        #expect(message.logSummary(limit: 5) == "ID:1;sender:Bob;receiver:H;payload:short;operation:REQ_deletePlant")
        message.payload = String(repeating: "é", count: 100 * 1024)
        #expect(message.logSummary(limit: 3) == "ID:1;sender:Bob;receiver:H;payload:ééé…;operation:REQ_deletePlant")
        #expect(
            message.logSummary().count == "ID:1;sender:Bob;receiver:H;payload:;operation:REQ_deletePlant".count + 121)
    }

    @Test(
        "operation kind flags",
        arguments: [
            ("REQ_numPlants", true, false, false),
            ("REQ_unknown", true, false, false),
            ("RES_numPlants", false, true, false),
            ("ERR_hashLength", false, false, true),
            ("err_hashLength", false, false, false),
            ("", false, false, false)
        ])
    func flags(_ operation: String, _ isRequest: Bool, _ isResponse: Bool, _ isError: Bool) {
        let message = PlantMessage(id: "1", sender: "a", receiver: "b", payload: "", operation: operation)
        #expect(message.isRequest == isRequest)
        #expect(message.isResponse == isResponse)
        #expect(message.isError == isError)
    }
}
