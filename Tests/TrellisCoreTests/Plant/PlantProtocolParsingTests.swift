import Testing
@testable import TrellisCore

private let host = "Host-RPI3B+"

private func parse(_ text: String) -> PlantParseResult {
    PlantProtocol.parse(Array(text.utf8), hostName: host)
}

/// One malformed message and everything the rejection should say about it.
struct PlantRejectionCase: Sendable, CustomTestStringConvertible {
    var message: String
    var tag: PlantErrorTag
    var reason: String
    var sender: String?
    var id: String?
    var testDescription: String { "\(reason): \(message.prefix(60))" }
}

@Suite("PlantProtocol parsing")
struct PlantProtocolParsingTests {
    static let rejections: [PlantRejectionCase] = [
        .init(message: "", tag: .hashLength, reason: "key_count"),
        .init(message: ";", tag: .missingVals, reason: "missing_value"),
        .init(message: "hello", tag: .missingVals, reason: "missing_value"),
        .init(
            message: "ID:1;sender:Bob;receiver:Host-RPI3B+;payload:a:b;operation:REQ_numPlants",
            tag: .missingKeys, reason: "too_many_colons", sender: "Bob", id: "1"),
        .init(
            message: "ID:1;sender:Bob;receiver:Host-RPI3B+;payload;operation:REQ_numPlants",
            tag: .missingVals, reason: "missing_value", sender: "Bob", id: "1"),
        .init(
            message: "ID:1;payload;sender:Bob;x:y:z", tag: .missingVals, reason: "missing_value", sender: "Bob", id: "1"
        ),
        .init(message: "ID:1;x:y:z;payload", tag: .missingKeys, reason: "too_many_colons", id: "1"),
        .init(
            message: "ID:1;sender:Bob;receiver:Host-RPI3B+;payload:x", tag: .hashLength, reason: "key_count",
            sender: "Bob", id: "1"),
        .init(
            message: "ID:1;sender:Bob;receiver:Host-RPI3B+;payload:x;operation:REQ_numPlants;extra:1",
            tag: .hashLength, reason: "key_count", sender: "Bob", id: "1"),
        .init(message: "id:1;sender:Bob;receiver:H;payload:x", tag: .hashLength, reason: "key_count", sender: "Bob"),
        .init(
            message: "id:1;sender:Bob;receiver:Host-RPI3B+;payload:x;operation:REQ_numPlants",
            tag: .missingKeys, reason: "unknown_key", sender: "Bob"),
        .init(
            message: "ID:1; sender:Bob;receiver:Host-RPI3B+;payload:x;operation:REQ_numPlants",
            tag: .missingKeys, reason: "unknown_key", id: "1"),
        .init(
            message: "ID:1;sender:Bob;receiver:Host-RPI3B+;payload:x;Operation:REQ_numPlants",
            tag: .missingKeys, reason: "unknown_key", sender: "Bob", id: "1"),
        .init(
            message: "ID:1;sender:Bob;receiver:Host-RPI3B+;payload:x;operation:REQ_unknown",
            tag: .invalidOpTag, reason: "unknown_operation", sender: "Bob", id: "1"),
        .init(
            message: "ID:1;sender:Bob;receiver:Host-RPI3B+;payload:x;operation:req_numPlants",
            tag: .invalidOpTag, reason: "unknown_operation", sender: "Bob", id: "1"),
        .init(
            message: "ID:1;sender:Bob;receiver:Host-RPI3B+;payload:x;operation:RES_numPlants",
            tag: .invalidOpTag, reason: "unknown_operation", sender: "Bob", id: "1"),
        .init(
            message: "ID:1;sender:Bob;receiver:Host-RPI3B+;payload:x;operation:",
            tag: .invalidOpTag, reason: "unknown_operation", sender: "Bob", id: "1"),
        .init(
            message: "ID:7;receiver:H:X;sender:Bob's iPhone;payload:x;operation:REQ_numPlants",
            tag: .missingKeys, reason: "too_many_colons", sender: "Bob's iPhone", id: "7"),
        .init(
            message: "ID:7;receiver;sender:Zoë 📱;payload:x;operation:REQ_numPlants",
            tag: .missingVals, reason: "missing_value", sender: "Zoë 📱", id: "7"),
        .init(
            message: "ID:7;receiver:H;payload;operation:REQ_numPlants", tag: .missingVals, reason: "missing_value",
            id: "7"),
        .init(message: "ID:;sender:Bob;payload", tag: .missingVals, reason: "missing_value", sender: "Bob"),
        .init(message: "ID:1;sender:a:b;payload:x", tag: .missingKeys, reason: "too_many_colons", id: "1"),
        .init(message: "ID:1;sender:;payload", tag: .missingVals, reason: "missing_value", id: "1"),
        .init(message: "ID:1;sender:Host-RPI3B+;payload", tag: .missingVals, reason: "missing_value", id: "1"),
        .init(
            message: "ID:1;sender:Bob;receiver:Host-RPI3B+;payload:x;operation:REQ_numPlants;;",
            tag: .missingVals, reason: "missing_value", sender: "Bob", id: "1")
    ]

    @Test("malformed messages are rejected by the first failing rule", arguments: rejections)
    func rejects(_ c: PlantRejectionCase) {
        guard case .rejected(let rejection) = parse(c.message) else {
            Issue.record("expected a rejection, got \(parse(c.message))")
            return
        }
        #expect(rejection.tag == c.tag)
        #expect(rejection.reason == c.reason)
        #expect(rejection.sender == c.sender)
        #expect(rejection.id == c.id)
        #expect(rejection.original == c.message)
        #expect(rejection.isAnswerable == (c.sender != nil))
    }

    @Test(
        "well-formed requests are parsed field by field",
        arguments: [
            (
                "ID:0;sender:Bob's iPhone;receiver:Host-RPI3B+;payload:all;operation:REQ_plantSensorData",
                PlantMessage(
                    id: "0", sender: "Bob's iPhone", receiver: "Host-RPI3B+", payload: "all",
                    operation: "REQ_plantSensorData")
            ),
            (
                "ID:0;sender:Bob's iPhone;receiver:Host-RPI3B+;payload:all;operation:REQ_plantSensorData;",
                PlantMessage(
                    id: "0", sender: "Bob's iPhone", receiver: "Host-RPI3B+", payload: "all",
                    operation: "REQ_plantSensorData")
            ),
            (
                "operation:REQ_numPlants;payload:;receiver:;sender:Bob;ID:",
                PlantMessage(id: "", sender: "Bob", receiver: "", payload: "", operation: "REQ_numPlants")
            ),
            (
                "ID:42;sender:Zoë 📱;receiver:Host-RPI3B+;payload:Fougère 🌿,0x36;operation:REQ_addNewPlant",
                PlantMessage(
                    id: "42", sender: "Zoë 📱", receiver: "Host-RPI3B+", payload: "Fougère 🌿,0x36",
                    operation: "REQ_addNewPlant")
            ),
            (
                "ID:1;sender:Bob;receiver:Host-RPI3B+;payload: big fern ;operation:REQ_deletePlant",
                PlantMessage(
                    id: "1", sender: "Bob", receiver: "Host-RPI3B+", payload: " big fern ", operation: "REQ_deletePlant"
                )
            ),
            (
                "ID:1;sender:Bob;receiver:Host-RPI3B+;payload:50%25 off%3B at 10%3A30 100%;operation:REQ_deletePlant",
                PlantMessage(
                    id: "1", sender: "Bob", receiver: "Host-RPI3B+", payload: "50% off; at 10:30 100%",
                    operation: "REQ_deletePlant")
            ),
            (
                "ID:1;ID:2;sender:Bob;receiver:Host-RPI3B+;payload:x;operation:REQ_numPlants",
                PlantMessage(id: "2", sender: "Bob", receiver: "Host-RPI3B+", payload: "x", operation: "REQ_numPlants")
            ),
            (
                "ID:C0FFEE-1;sender:3F2504E0-4F89-11D3-9A0C-0305E82C3301;receiver:Host-RPI3B+;payload:;operation:REQ_plantInfoOnStartup",
                PlantMessage(
                    id: "C0FFEE-1", sender: "3F2504E0-4F89-11D3-9A0C-0305E82C3301", receiver: "Host-RPI3B+",
                    payload: "", operation: "REQ_plantInfoOnStartup")
            )
        ])
    func parsesRequests(_ text: String, _ expected: PlantMessage) {
        #expect(parse(text) == .request(expected, PlantOperation(rawValue: expected.operation)!))
    }

    @Test("every known operation is accepted", arguments: PlantOperation.allCases)
    func knownOperations(_ operation: PlantOperation) {
        let text = "ID:1;sender:Bob;receiver:Host-RPI3B+;payload:x;operation:\(operation.rawValue)"
        guard case .request(_, let parsed) = parse(text) else {
            Issue.record("not a request")
            return
        }
        #expect(parsed == operation)
    }

    @Test("a 100 KiB payload is parsed intact")
    func largePayload() {
        let big = String(repeating: "abcdefgh", count: 100 * 1024 / 8)
        let result = parse("ID:1;sender:Bob;receiver:Host-RPI3B+;payload:\(big);operation:REQ_deletePlant")
        guard case .request(let message, .deletePlant) = result else {
            Issue.record("not a request")
            return
        }
        #expect(message.payload.utf8.count == 102_400)
        #expect(message.payload == big)
    }

    @Test(
        "invalid UTF-8 is rejected without tag, sender or original",
        arguments: [
            [0xFF, 0xFE],
            Array("ID:1;sender:Bob;receiver:H;payload:".utf8) + [0xC3] + Array(";operation:REQ_numPlants".utf8),
            Array("ID:1;sender:Bob".utf8) + [0xED, 0xA0, 0x80]
        ] as [[UInt8]])
    func invalidUTF8(_ bytes: [UInt8]) {
        let expected = PlantRejection(tag: nil, reason: "invalid_utf8")
        #expect(PlantProtocol.parse(bytes, hostName: host) == .rejected(expected))
        #expect(expected.isAnswerable == false)
        #expect(PlantProtocol.error(for: expected, hostName: host) == nil)
    }

    @Test(
        "the host's own well-formed messages are ignored, whatever their operation",
        arguments: [
            "ID:0;sender:Host-RPI3B+;receiver:Bob;payload:3;operation:RES_numPlants",
            "ID:0;sender:Host-RPI3B+;receiver:Bob;payload:x;operation:ERR_hashLength",
            "ID:0;sender:Host-RPI3B+;receiver:Bob;payload:x;operation:REQ_bogus"
        ])
    func ownMessages(_ text: String) {
        #expect(parse(text) == .ownMessage)
        #expect(parse(text).accountableSender == nil)
    }

    @Test("a host name differing only in case is not the host")
    func hostNameIsCaseSensitive() {
        let result = parse("ID:0;sender:host-rpi3b+;receiver:Bob;payload:3;operation:RES_numPlants")
        guard case .rejected(let rejection) = result else {
            Issue.record("expected rejection")
            return
        }
        #expect(rejection.tag == .invalidOpTag)
        #expect(rejection.sender == "host-rpi3b+")
    }

    @Test("incoming ERR_ messages are reported, never rejected")
    func incomingErrors() {
        let text = "ID:0;sender:Bob;receiver:Host-RPI3B+;payload:ID-1|sender-Host;operation:ERR_invalidOpTag"
        let expected = PlantMessage(
            id: "0", sender: "Bob", receiver: "Host-RPI3B+", payload: "ID-1|sender-Host", operation: "ERR_invalidOpTag")
        #expect(parse(text) == .incomingError(expected))
        #expect(parse(text).accountableSender == nil)
        let unknownError = parse("ID:0;sender:Bob;receiver:Host-RPI3B+;payload:;operation:ERR_madeUp")
        #expect(
            unknownError
                == .incomingError(
                    PlantMessage(
                        id: "0", sender: "Bob", receiver: "Host-RPI3B+", payload: "", operation: "ERR_madeUp")))
        // An incoming error's payload is percent-decoded like a request's.
        let escaped = parse("ID:0;sender:Bob;receiver:Host-RPI3B+;payload:a%3Bb%3Ac 100%25;operation:ERR_hashLength")
        #expect(
            escaped
                == .incomingError(
                    PlantMessage(
                        id: "0", sender: "Bob", receiver: "Host-RPI3B+", payload: "a;b:c 100%",
                        operation: "ERR_hashLength")))
    }

    @Test("a malformed ERR_ message is rejected but never answered nor counted")
    func malformedIncomingError() {
        let result = parse("ID:0;sender:Bob;receiver:Host-RPI3B+;payload:ID:1;operation:ERR_hashLength")
        guard case .rejected(let rejection) = result else {
            Issue.record("expected rejection")
            return
        }
        #expect(rejection.tag == .missingKeys)
        #expect(rejection.operation == "ERR_hashLength")
        #expect(rejection.isIncomingError)
        #expect(!rejection.isAnswerable)
        #expect(result.accountableSender == nil)
        #expect(PlantProtocol.error(for: rejection, hostName: host) == nil)
    }

    @Test(
        "accountable sender per result kind",
        arguments: [
            ("ID:1;sender:Bob;receiver:H;payload:x;operation:REQ_numPlants", "Bob"),
            ("ID:1;sender:Bob;receiver:H;payload:x;operation:REQ_nope", "Bob"),
            ("ID:1;receiver:H:H;sender:Bob;payload:x;operation:REQ_numPlants", "Bob"),
            ("ID:1;receiver:H;payload:x;operation:REQ_numPlants", nil),
            ("ID:1;sender:Host-RPI3B+;receiver:H;payload", nil)
        ] as [(String, String?)])
    func accountableSender(_ text: String, _ expected: String?) {
        #expect(parse(text).accountableSender == expected)
    }

    @Test("parsing text and bytes agree")
    func textAndBytesAgree() {
        let text = "ID:9;sender:Bob;receiver:Host-RPI3B+;payload:Fern;operation:REQ_deletePlant"
        #expect(PlantProtocol.parse(text, hostName: host) == parse(text))
    }
}

@Suite("PlantProtocol splits on the bytes `;` and `:`")
struct PlantSeparatorTests {
    private func parse(_ text: String) -> PlantParseResult {
        PlantProtocol.parse(Array(text.utf8), hostName: "Host-RPI3B+")
    }

    @Test("a character that only looks like a separator is kept in the value")
    func lookalikes() throws {
        // U+037E GREEK QUESTION MARK is canonically equivalent to `;` but is not the byte `;`;
        // U+A789 MODIFIER LETTER COLON only looks like `:`.
        let result = parse(
            "ID:7;sender:Bob;receiver:Host-RPI3B+;payload:a\u{037E}b\u{A789}c;operation:REQ_plantSensorData")
        guard case let .request(message, operation) = result else { Issue.record("not a request: \(result)"); return }
        #expect(operation == .plantSensorData)
        #expect(message.payload == "a\u{037E}b\u{A789}c")
    }

    @Test("a combining mark right after `;` or `:` stays with the text that follows")
    func combiningMarks() throws {
        let result = parse("ID:7;sender:\u{301}Bob;receiver:Host-RPI3B+;payload:x;operation:REQ_numPlants")
        guard case let .request(message, _) = result else { Issue.record("not a request: \(result)"); return }
        #expect(message.sender.unicodeScalars.elementsEqual("\u{301}Bob".unicodeScalars))
    }

    @Test("a rejected message's sender is recovered by the same cut")
    func recoveredSender() throws {
        let result = parse("ID:7;sender:\u{301}Bob;receiver:Host-RPI3B+;payload;operation:REQ_numPlants")
        guard case let .rejected(rejection) = result else { Issue.record("not rejected: \(result)"); return }
        #expect(rejection.tag == .missingVals)
        #expect(rejection.sender?.unicodeScalars.elementsEqual("\u{301}Bob".unicodeScalars) == true)
        #expect(rejection.id == "7")
    }

    /// The parser reads the sender and the operation as bytes; names and tags still compare as
    /// strings do (by canonical equivalence, by characters), as the rest of the protocol compares them.
    struct TextRule: Sendable, CustomTestStringConvertible {
        var label: String
        var hostName: String
        var message: String
        var expected: String

        var testDescription: String { label }
    }

    static let textRules: [TextRule] = [
        TextRule(
            label: "a Kelvin sign for the host name's K is the host", hostName: "KitchenPi",
            message: "ID:1;sender:\u{212A}itchenPi;receiver:x;payload:y;operation:REQ_numPlants", expected: "own"),
        TextRule(
            label: "a decomposed é for the host name's composed one is the host", hostName: "Caf\u{E9}",
            message: "ID:1;sender:Cafe\u{301};receiver:x;payload:y;operation:REQ_numPlants", expected: "own"),
        TextRule(
            label: "another ASCII name is not the host", hostName: "KitchenPi",
            message: "ID:1;sender:KitchenPI;receiver:x;payload:y;operation:REQ_numPlants", expected: "request"),
        TextRule(
            label: "a combining mark after ERR_ makes it no ERR_ tag", hostName: host,
            message: "ID:1;sender:alice;receiver:h;payload:x;operation:ERR_\u{301}x", expected: "unknown_operation"),
        TextRule(
            label: "ERR_ followed by a letter outside ASCII is an ERR_ tag", hostName: host,
            message: "ID:1;sender:alice;receiver:h;payload:x;operation:ERR_\u{E9}", expected: "incoming error"),
        TextRule(
            label: "ERR_ alone is an ERR_ tag", hostName: host,
            message: "ID:1;sender:alice;receiver:h;payload:x;operation:ERR_", expected: "incoming error")
    ]

    @Test("the sender and the operation compare as text", arguments: textRules)
    func textRule(_ rule: TextRule) {
        let outcome =
            switch PlantProtocol.parse(Array(rule.message.utf8), hostName: rule.hostName) {
            case .ownMessage: "own"
            case .request: "request"
            case .incomingError: "incoming error"
            case let .rejected(rejection): rejection.reason
            }
        #expect(outcome == rule.expected)
    }
}
