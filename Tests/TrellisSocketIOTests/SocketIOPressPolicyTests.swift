import Testing
import TrellisCore
@testable import TrellisSocketIO

@Suite("Socket.IO press policy and refusal reports")
struct SocketIOPressPolicyTests {
    @Test(
        "who may press",
        arguments: [
            (SocketIOPressPolicy.off, "s3cret", SocketIOPressPolicy.Decision.pressesOff),
            (.off, nil, .pressesOff),
            (.token("s3cret"), "s3cret", .allowed),
            (.token("s3cret"), nil, .missingToken),
            (.token("s3cret"), "", .missingToken),
            (.token("s3cret"), "s3cre", .wrongToken),
            (.token("s3cret"), "s3cret!", .wrongToken),
            (.token("s3cret"), "S3CRET", .wrongToken)
        ] as [(SocketIOPressPolicy, String?, SocketIOPressPolicy.Decision)])
    func decide(policy: SocketIOPressPolicy, token: String?, decision: SocketIOPressPolicy.Decision) {
        #expect(policy.decide(token) == decision)
    }

    @Test(
        "the token presented: Socket.IO 5's auth first, then the handshake's query",
        arguments: [
            (JSONValue.object(["token": .string("a")]), "b", "a"),
            (nil, "b", "b"),
            (.object(["other": .string("a")]), "b", "b"),
            (.object(["token": .integer(5)]), nil, nil),
            (.string("a"), nil, nil)
        ] as [(JSONValue?, String?, String?)])
    func presented(auth: JSONValue?, query: String?, token: String?) {
        #expect(SocketIOPressPolicy.presentedToken(auth: auth, query: query) == token)
    }

    @Test(
        "the token presented: auth first, then a header of the handshake, then its query",
        arguments: [
            (JSONValue.object(["token": .string("a")]), "h", "q", "a"),
            (nil, "h", "q", "h"),
            (nil, nil, "q", "q"),
            (.object(["other": .string("a")]), "h", nil, "h")
        ] as [(JSONValue?, String?, String?, String?)])
    func presentedWithHeader(auth: JSONValue?, header: String?, query: String?, token: String?) {
        #expect(SocketIOPressPolicy.presentedToken(auth: auth, header: header, query: query) == token)
    }

    @Test(
        "the token of the headers: X-Trellis-Press-Token, else Authorization: Bearer",
        arguments: [
            ("s3cret", nil, "s3cret"),
            ("  s3cret\t", "Bearer other", "s3cret"),
            ("", "Bearer other", "other"),
            (nil, "Bearer s3cret", "s3cret"),
            (nil, "bearer   s3cret ", "s3cret"),
            (nil, "BEARER s3cret", "s3cret"),
            (nil, "Basic dXNlcjpwYXNz", nil),
            (nil, "Bearer", nil),
            (nil, "Bearer   ", nil),
            (nil, "", nil),
            (nil, nil, nil)
        ] as [(String?, String?, String?)])
    func headerToken(pressToken: String?, authorization: String?, token: String?) {
        #expect(SocketIOPressPolicy.headerToken(pressToken: pressToken, authorization: authorization) == token)
    }

    @Test("refusals are reported at once, then once per address and interval with the count held back")
    func refusalReport() {
        var report = RefusalReport(interval: 60)
        #expect(report.record("127.0.0.2", now: 0) == 1)
        for second in 1...59 { #expect(report.record("127.0.0.2", now: Double(second)) == nil) }
        #expect(report.record("127.0.0.1", now: 30) == 1)
        #expect(report.record("127.0.0.2", now: 60) == 60)
        #expect(report.record("127.0.0.2", now: 61) == nil)
    }

    @Test("a full report forgets addresses whose interval has passed")
    func refusalReportCapacity() {
        var report = RefusalReport(interval: 60, capacity: 2)
        #expect(report.record("a", now: 0) == 1)
        #expect(report.record("b", now: 1) == 1)
        #expect(report.record("c", now: 70) == 1)
        // a and b were forgotten, so each is reported at once again.
        #expect(report.record("a", now: 71) == 1)
    }
}
