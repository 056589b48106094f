import Testing
import TrellisSocketIO

/// Which pages may use the endpoint: none given, the endpoint's own origin (its `Host`) when that
/// `Host` is trusted, the configured list, and nothing else; how the list is read and origins compared.
@Suite("Socket.IO: allowed origins")
struct OriginPolicyTests {
    static let configured = try! OriginPolicy.parse("http://p2o.lan:3000, https://Buttons.Example:443,null").get()
        .trusting(try! HostPolicy.parse("trellis.lan").get())

    @Test(
        "decisions",
        arguments: [
            (nil, "trellis.lan:3001", OriginPolicy.Decision.noOrigin),
            ("http://trellis.lan:3001", "trellis.lan:3001", .own),
            ("HTTP://Trellis.LAN:3001", "trellis.lan:3001", .own),
            ("http://trellis.lan", "trellis.lan:80", .own),
            ("https://trellis.lan", "trellis.lan", .own),
            ("https://trellis.lan:443", "trellis.lan", .own),
            ("http://trellis.lan:3000", "trellis.lan:3001", .foreign),
            ("http://evil.example", "trellis.lan:3001", .foreign),
            ("http://trellis.lan:3001.evil.example", "trellis.lan:3001", .foreign),
            ("http://trellis.lan:3001/path", "trellis.lan:3001", .foreign),
            ("http://evil.example", nil, .foreign),
            ("http://p2o.lan:3000", "trellis.lan:3001", .configured),
            ("http://p2o.lan", "trellis.lan:3001", .foreign),
            ("https://buttons.example", "trellis.lan:3001", .configured),
            ("null", "trellis.lan:3001", .configured),
            ("file://", "trellis.lan:3001", .foreign),
            ("", "trellis.lan:3001", .foreign),
            // Two Origin headers, joined: no single origin, so refused.
            ("http://trellis.lan:3001, http://p2o.lan:3000", "trellis.lan:3001", .foreign)
        ] as [(String?, String?, OriginPolicy.Decision)])
    func decide(origin: String?, host: String?, decision: OriginPolicy.Decision) {
        #expect(Self.configured.decide(origin: origin, host: host) == decision)
    }

    @Test("the default allows the own origin and requests without one, no other")
    func ownOnly() {
        #expect(OriginPolicy.ownOnly.decide(origin: "http://127.0.0.1:3001", host: "127.0.0.1:3001") == .own)
        #expect(OriginPolicy.ownOnly.decide(origin: nil, host: "127.0.0.1:3001").isAllowed)
        #expect(OriginPolicy.ownOnly.decide(origin: "null", host: "127.0.0.1:3001") == .foreign)
        #expect(OriginPolicy.ownOnly.decide(origin: "http://127.0.0.1:3000", host: "127.0.0.1:3001") == .foreign)
        #expect(OriginPolicy.ownOnly.decide(origin: "http://localhost:3001", host: "localhost:3001") == .own)
        #expect(OriginPolicy.ownOnly.decide(origin: "http://[::1]:3001", host: "[::1]:3001") == .own)
    }

    @Test(
        "DNS rebinding: the own origin of a name not listed is an unknown host, so is a page's request without Origin")
    func rebinding() {
        let page = "http://evil.example:3001", host = "evil.example:3001"
        #expect(OriginPolicy.ownOnly.decide(origin: page, host: host) == .unknownHost)
        #expect(!OriginPolicy.ownOnly.decide(origin: page, host: host).isAllowed)
        #expect(Self.configured.decide(origin: page, host: host) == .unknownHost)
        // A browser's same-origin GET carries no Origin, but Sec-Fetch-Site.
        #expect(OriginPolicy.ownOnly.decide(origin: nil, host: host, fetchSite: "same-origin") == .unknownHost)
        // Typed into the address bar, or an app dialling the name: served.
        #expect(OriginPolicy.ownOnly.decide(origin: nil, host: host, fetchSite: "none") == .noOrigin)
        #expect(OriginPolicy.ownOnly.decide(origin: nil, host: host) == .noOrigin)
        #expect(OriginPolicy.ownOnly.decide(origin: nil, host: "127.0.0.1:3001", fetchSite: "same-origin") == .noOrigin)
        // A configured origin is trusted whatever name it reaches the endpoint by.
        #expect(Self.configured.decide(origin: "http://p2o.lan:3000", host: host) == .configured)
        // A listed name, in any case, and * for any name.
        #expect(Self.configured.decide(origin: "http://TRELLIS.lan:3001", host: "trellis.LAN:3001") == .own)
        let any = OriginPolicy.ownOnly.trusting(try! HostPolicy.parse("*").get())
        #expect(any.decide(origin: page, host: host) == .own)
    }

    @Test("* allows any origin")
    func any() throws {
        let policy = try OriginPolicy.parse("*").get()
        #expect(policy.decide(origin: "http://anything.example", host: "trellis.lan:3001") == .configured)
    }

    @Test(
        "the list: empty entries ignored, anything but an origin refused naming the entry",
        arguments: [
            ("", true), (" , ,", true), ("http://a.lan:1, https://b.lan", true), ("*", true), ("null", true),
            ("a.lan:3000", false), ("http://a.lan/", false), ("ftp://a.lan", false), ("http://", false),
            ("http://user@a.lan", false), ("http://a.lan, b", false)
        ])
    func parse(list: String, valid: Bool) {
        switch OriginPolicy.parse(list) {
        case .success: #expect(valid, "\(list)")
        case let .failure(error):
            #expect(!valid, "\(list)")
            #expect(error.description.contains("is not an origin"))
        }
    }
}
