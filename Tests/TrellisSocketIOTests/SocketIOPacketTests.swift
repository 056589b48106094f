import Testing
import TrellisCore
@testable import TrellisSocketIO

@Suite("Socket.IO packets")
struct SocketIOPacketTests {
    @Test(
        "decoding and encoding",
        arguments: [
            ("0", SocketIOPacket(type: .connect)),
            (#"0{"token":"x"}"#, SocketIOPacket(type: .connect, data: #"{"token":"x"}"#)),
            ("0/admin,", SocketIOPacket(type: .connect, namespace: "/admin")),
            ("1", SocketIOPacket(type: .disconnect)),
            (#"2["register","test"]"#, SocketIOPacket(type: .event, data: #"["register","test"]"#)),
            (#"2/chat,7["a"]"#, SocketIOPacket(type: .event, namespace: "/chat", ackID: 7, data: #"["a"]"#)),
            (#"312["ok"]"#, SocketIOPacket(type: .ack, ackID: 12, data: #"["ok"]"#)),
            (
                #"4/x,"Invalid namespace""#,
                SocketIOPacket(type: .connectError, namespace: "/x", data: #""Invalid namespace""#)
            ),
            (
                #"51-["file",{"_placeholder":true,"num":0}]"#,
                SocketIOPacket(type: .binaryEvent, attachments: 1, data: #"["file",{"_placeholder":true,"num":0}]"#)
            )
        ])
    func packets(text: String, packet: SocketIOPacket) {
        #expect(SocketIOPacket.decode(text) == .success(packet))
        #expect(packet.encoded == text)
    }

    @Test(
        "what the fuzzer found: every decoded packet encodes back to itself",
        arguments: [
            "2/,/,V", "0/l\u{0} \u{6DD}", "2/,/\u{36E}-[", "2\u{301}[\"a\"]", "27\u{301}"
        ])
    func roundTrips(text: String) throws {
        let packet = try SocketIOPacket.decode(text).get()
        #expect(SocketIOPacket.decode(packet.encoded) == .success(packet))
    }

    @Test(
        "malformed packets",
        arguments: [
            ("", SocketIOError.unknownPacketType),
            ("9", .unknownPacketType),
            ("x2[]", .unknownPacketType),
            ("5[]", .invalidAttachments),
            ("5x-[]", .invalidAttachments),
            ("2" + String(repeating: "9", count: 20) + "[]", .invalidAckID),
            ("0/" + String(repeating: "n", count: 300) + ",", .invalidNamespace)
        ])
    func malformed(text: String, error: SocketIOError) {
        #expect(SocketIOPacket.decode(text) == .failure(error))
    }

    @Test("events: a name and JSON arguments")
    func events() throws {
        let packet = try SocketIOPacket.decode(#"2["register","test",{"a":[1,1.5,true,null]}]"#).get()
        let event = try packet.event().get()
        #expect(event.name == "register")
        #expect(
            event.arguments == [
                .string("test"), .object(["a": .array([.integer(1), .number(1.5), .bool(true), .null])])
            ])
    }

    @Test(
        "event data that is not a named JSON array",
        arguments: [
            "2", "2[]", "2[1]", "2{\"a\":1}", "2[\"x\"", "2\"register\"", "2[" + String(repeating: "[", count: 40) + "]"
        ])
    func invalidEvents(text: String) throws {
        let packet = try SocketIOPacket.decode(text).get()
        #expect(packet.event().map(\.name) == .failure(.invalidEventData))
    }

    @Test("events written by the server")
    func encodeEvents() {
        #expect(
            SocketIOPacket.event("button-press", argumentsJSON: [JSONText.string("door")]).encoded
                == #"2["button-press","door"]"#)
        #expect(
            SocketIOPacket.event("connection-response", argumentsJSON: [#"{"status":"success"}"#]).encoded
                == #"2["connection-response",{"status":"success"}]"#)
    }

    @Test(
        "JSON string escaping",
        arguments: [
            ("plain", #""plain""#), ("a\"b", #""a\"b""#), ("back\\slash", #""back\\slash""#),
            ("line\nbreak", #""line\nbreak""#), ("\u{1}", #""\u0001""#), ("\u{8}\u{C}\u{7F}", #""\b\f\u007f""#),
            ("a\u{2028}b\u{2029}", #""a\u2028b\u2029""#), ("🔘", "\"🔘\"")
        ])
    func escaping(value: String, json: String) {
        #expect(JSONText.string(value) == json)
        #expect(JSONValue.parse(json) == .string(value))
    }
}
