import Testing
@testable import TrellisCore

private let host = "Host-RPI3B+"

private func parse(_ text: String, hostName: String = host) -> PlantParseResult {
    PlantProtocol.parse(Array(text.utf8), hostName: hostName)
}

private func rejectionOf(_ text: String) -> PlantRejection? {
    if case .rejected(let rejection) = parse(text) { return rejection }
    return nil
}

@Suite("PlantProtocol replies and errors")
struct PlantRepliesTests {
    @Test(
        "operation tags and response tags",
        arguments: [
            (
                PlantOperation.plantInfoOnStartup, "REQ_plantInfoOnStartup", "RES_plantInfoOnStartup",
                "plantInfoOnStartup"
            ),
            (.plantSensorData, "REQ_plantSensorData", "RES_plantSensorData", "plantSensorData"),
            (.numPlants, "REQ_numPlants", "RES_numPlants", "numPlants"),
            (.addNewPlant, "REQ_addNewPlant", "RES_addNewPlant", "addNewPlant"),
            (.deletePlant, "REQ_deletePlant", "RES_deletePlant", "deletePlant")
        ])
    func operationTags(_ operation: PlantOperation, _ request: String, _ response: String, _ name: String) {
        #expect(operation.requestTag == request)
        #expect(operation.responseTag == response)
        #expect(operation.name == name)
    }

    @Test("the six requests and eleven error tags")
    func tagLists() {
        #expect(PlantOperation.allCases.count == 6)
        #expect(
            PlantErrorTag.allCases.map(\.tag) == [
                "ERR_hashLength", "ERR_missingVals", "ERR_missingKeys", "ERR_invalidOpTag", "ERR_kickedForSpam",
                "ERR_noPlantDataToRequest", "ERR_plantNameTaken", "ERR_plantNameTooLong", "ERR_tooManyPlants",
                "ERR_invalidPlantSensorID", "ERR_cannotDeletePlant"
            ])
    }

    @Test("reply to the original client's request")
    func replyToOriginalClient() {
        let text = "ID:0;sender:Bob's iPhone;receiver:Host-RPI3B+;payload:all;operation:REQ_plantSensorData"
        guard case .request(let request, let operation) = parse(text) else {
            Issue.record("not a request")
            return
        }
        let body = #"[{"at":null,"moisture":null,"plant":"Fern","sensor":"0x36","temperature":null}]"#
        let reply = PlantProtocol.reply(to: request, operation: operation, payload: body, hostName: host)
        #expect(
            reply
                == PlantMessage(
                    id: "0", sender: host, receiver: "Bob's iPhone", payload: body, operation: "RES_plantSensorData"))
        #expect(
            reply.encoded() == "ID:0;sender:Host-RPI3B+;receiver:Bob's iPhone;payload:"
                + #"[{"at"%3Anull,"moisture"%3Anull,"plant"%3A"Fern","sensor"%3A"0x36","temperature"%3Anull}]"#
                + ";operation:RES_plantSensorData")
        #expect(reply.encodedBytes() == Array(reply.encoded().utf8))
    }

    @Test(
        "an encoded reply parses back losslessly on the client side",
        arguments: [
            "3", "", "50% off; now: yes", "%41 stays literal", "Fougère 🌿;é:ü", #"{"a":"b/c"}"#
        ])
    func replyRoundTrip(_ payload: String) {
        let request = PlantMessage(id: "5", sender: "Bob", receiver: host, payload: "x", operation: "REQ_numPlants")
        let reply = PlantProtocol.reply(to: request, operation: .numPlants, payload: payload, hostName: host)
        let pieces = reply.encoded().split(separator: ";", omittingEmptySubsequences: false)
        #expect(pieces.count == 5)
        #expect(pieces.allSatisfy { $0.split(separator: ":", omittingEmptySubsequences: false).count == 2 })
        guard case .rejected(let seenByClient) = parse(reply.encoded(), hostName: "Bob") else {
            Issue.record("a RES_ message is not a request for the host")
            return
        }
        #expect(seenByClient.tag == .invalidOpTag)
        #expect(PlantPercentEncoding.decode(String(pieces[3].dropFirst("payload:".count))) == payload)
    }

    @Test(
        "a reply built from a payload encoded once is the reply encoded whole",
        arguments: [
            "3", "", "50% off; now: yes", "Fougère 🌿;é:ü", #"[{"at":null,"plant":"Fern"}]"#
        ])
    func replyFromEncodedPayload(_ payload: String) {
        let request = PlantMessage(
            id: "5", sender: "Bob", receiver: host, payload: "x", operation: "REQ_plantSensorData")
        let whole = PlantProtocol.reply(to: request, operation: .plantSensorData, payload: payload, hostName: host)
        let encoded = EncodedPlantPayload(payload)
        #expect(encoded.text == payload)
        #expect(
            PlantProtocol.replyBytes(to: request, operation: .plantSensorData, payload: encoded, hostName: host)
                == whole.encodedBytes())
    }

    @Test("error for a bad piece before sender goes to the recovered sender with the recovered ID")
    func errorBeforeSender() throws {
        let text = "ID:7;receiver:H:X;sender:Bob's iPhone;payload:x;operation:REQ_numPlants"
        let rejection = try #require(rejectionOf(text))
        let error = try #require(PlantProtocol.error(for: rejection, hostName: host))
        #expect(
            error
                == PlantMessage(
                    id: "7", sender: host, receiver: "Bob's iPhone", payload: text, operation: "ERR_missingKeys"))
        #expect(
            error.encoded() == "ID:7;sender:Host-RPI3B+;receiver:Bob's iPhone;"
                + "payload:ID%3A7%3Breceiver%3AH%3AX%3Bsender%3ABob's iPhone%3Bpayload%3Ax%3Boperation%3AREQ_numPlants;"
                + "operation:ERR_missingKeys")
        #expect(parse(error.encoded(), hostName: "Bob's iPhone") == .incomingError(error))
    }

    @Test(
        "error ID is 0 when the ID cannot be recovered",
        arguments: [
            "sender:Bob;receiver;payload:x;operation:REQ_numPlants",
            "ID:;sender:Bob;receiver;payload:x;operation:REQ_numPlants",
            "ID:1:2;sender:Bob;receiver:H;payload:x;operation:REQ_numPlants"
        ])
    func errorIDZero(_ text: String) throws {
        let rejection = try #require(rejectionOf(text))
        let error = try #require(PlantProtocol.error(for: rejection, hostName: host))
        #expect(error.id == "0")
        #expect(error.receiver == "Bob")
        #expect(error.payload == text)
    }

    @Test(
        "no error reply without a recoverable sender, for the host, or for invalid UTF-8",
        arguments: [
            "ID:7;receiver:H;payload;operation:REQ_numPlants",
            "ID:7;sender:;payload;operation:REQ_numPlants",
            "ID:7;sender:Host-RPI3B+;payload;operation:REQ_numPlants",
            "ID:1; sender:Bob;receiver:Host-RPI3B+;payload:x;operation:REQ_numPlants"
        ])
    func noReply(_ text: String) throws {
        let rejection = try #require(rejectionOf(text))
        #expect(!rejection.isAnswerable)
        #expect(PlantProtocol.error(for: rejection, hostName: host) == nil)
        #expect(PlantProtocol.error(.kickedForSpam, for: rejection, hostName: host) == nil)
    }

    @Test("an explicit tag overrides the rejection's own, e.g. for spam")
    func explicitTagForRejection() throws {
        let text = "ID:3;sender:Bob;receiver:Host-RPI3B+;payload:x;operation:REQ_bogus"
        let rejection = try #require(rejectionOf(text))
        let error = try #require(PlantProtocol.error(.kickedForSpam, for: rejection, hostName: host))
        #expect(
            error == PlantMessage(id: "3", sender: host, receiver: "Bob", payload: text, operation: "ERR_kickedForSpam")
        )
    }

    @Test("a rejection without a tag gets no reply")
    func untaggedRejection() {
        let rejection = PlantRejection(tag: nil, reason: "invalid_utf8", sender: "Bob", id: "1", original: "x")
        #expect(rejection.isAnswerable == false)
        #expect(PlantProtocol.error(for: rejection, hostName: host) == nil)
    }

    @Test(
        "error for a well-formed request carries the request's wire form",
        arguments: [
            (PlantErrorTag.plantNameTaken, "Fern,0x36", "Fern,0x36"),
            (.kickedForSpam, "a;b:c%", "a%3Bb%3Ac%25")
        ])
    func errorForRequest(_ tag: PlantErrorTag, _ payload: String, _ encodedPayload: String) {
        let request = PlantMessage(
            id: "12", sender: "Bob", receiver: host, payload: payload, operation: "REQ_addNewPlant")
        let error = PlantProtocol.error(tag, for: request, hostName: host)
        let wire = "ID:12;sender:Bob;receiver:Host-RPI3B+;payload:\(encodedPayload);operation:REQ_addNewPlant"
        #expect(error == PlantMessage(id: "12", sender: host, receiver: "Bob", payload: wire, operation: tag.rawValue))
        #expect(parse(error.encoded(), hostName: "Bob") == .incomingError(error))
    }
}
