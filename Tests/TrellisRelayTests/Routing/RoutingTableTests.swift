import Testing
import TrellisRelay

/// Matching topics against the routing table: literal filters, `+` and `#` with their captures,
/// table order when several routes match, fallbacks, and `$` topics.
@Suite("Routing table: matching")
struct RoutingTableTests {
    /// A handler that is never called: these tests only look at which routes match.
    private static let idle = ClosureHandler { _, _ in .none }

    static let table = RoutingTable([
        Route("rpi/torpi", service: "a", handler: idle),
        Route("rpi/torpi/+", service: "b", handler: idle),
        Route("rpi/+", service: "c", handler: idle),
        Route("p2o/buttons/+/press", service: "d", handler: idle),
        Route("+/status", service: "e", handler: idle),
        Route("logs/#", service: "f", handler: idle),
        Route("svc/request/+", service: "g", fallback: true, handler: idle),
        Route("svc/request/list", service: "h", handler: idle),
        Route("svc/only", service: "i", fallback: true, handler: idle)
    ])

    @Test(
        "every matching route in table order, with its captures",
        arguments: [
            ("rpi/torpi", ["a", "c"], [[], ["torpi"]]),
            ("rpi/torpi/bob", ["b"], [["bob"]]),
            ("rpi/fromrpi", ["c"], [["fromrpi"]]),
            ("p2o/buttons/b7/press", ["d"], [["b7"]]),
            ("p2o/buttons/b7", [], []),
            ("pump/status", ["e"], [["pump"]]),
            ("logs", ["f"], [[""]]),
            ("logs/a/b", ["f"], [["a/b"]]),
            ("svc/request/list", ["h"], [[]]),
            ("svc/request/other", ["g"], [["other"]]),
            ("svc/only", ["i"], [[]]),
            ("$SYS/status", [], []),
            ("unknown/topic/here", [], [])
        ] as [(String, [String], [[String]])])
    func matches(_ topic: String, _ services: [String], _ captures: [[String]]) {
        let matches = Self.table.routes(for: topic)
        #expect(matches.map(\.route.service) == services)
        #expect(matches.map(\.captures) == captures)
    }

    @Test("a topic spelled like a literal filter gets the same routes as any topic matched level by level")
    func literalTopicsAgree() {
        // `rpi/torpi` is looked up; adding a route later must refresh what the lookup answers.
        var table = Self.table
        #expect(table.routes(for: "rpi/torpi").map(\.route.service) == ["a", "c"])
        table.add([Route("rpi/#", service: "z", handler: Self.idle)])
        #expect(table.routes(for: "rpi/torpi").map(\.route.service) == ["a", "c", "z"])
        #expect(table.routes(for: "rpi/torpi").map(\.captures) == [[], ["torpi"], ["torpi"]])
        #expect(table.routes(for: "rpi/other").map(\.route.service) == ["c", "z"])
    }

    @Test(
        "a topic canonically equal to a literal filter but spelled otherwise does not match it, as the broker compares bytes; a wildcard captures its own bytes"
    )
    func canonicalEquivalence() {
        let table = RoutingTable([
            Route("caf\u{E9}/x", service: "a", handler: Self.idle),
            Route("+/x", service: "b", handler: Self.idle)
        ])
        let decomposed = "cafe\u{301}/x"
        let matches = table.routes(for: decomposed)
        // Mosquitto delivers by bytes: a `café` subscription never gets `cafe`+U+0301, and a Response
        // Topic rule that matched by canonical equivalence would let one account's name stand for another's.
        #expect(matches.map(\.route.service) == ["b"], "levels compare as bytes")
        #expect(matches.last?.captures.first?.utf8.elementsEqual("cafe\u{301}".utf8) == true)
    }
}
