import Testing
import TrellisSocketIO

/// Which `Host` names a web page may reach the HTTP servers by: IP literals, `localhost` and the
/// listed names, any port; how the list is read; which requests count as a page's.
@Suite("HTTP: allowed host names")
struct HostPolicyTests {
    static let listed = try! HostPolicy.parse("Trellis.LAN, pi.local").get()

    @Test(
        "trusted hosts",
        arguments: [
            ("127.0.0.1:3001", true), ("192.168.1.20", true), ("[::1]:3001", true), ("[fe80::1%25eth0]:80", false),
            ("[2001:db8::7]", true), ("localhost:3001", true), ("LOCALHOST", true), ("trellis.lan:3001", true),
            ("pi.local", true), ("evil.example:3001", false), ("localhost.evil.example", false),
            ("1.2.3.4.evil.example", false),
            ("256.1.1.1", false), ("1.2.3", false), ("", false), (":3001", false), ("trellis.lan.", false)
        ] as [(String, Bool)])
    func trusts(host: String, trusted: Bool) {
        #expect(Self.listed.trusts(host) == trusted, "\(host)")
    }

    @Test("no Host is not trusted; * trusts every name")
    func edges() throws {
        #expect(!HostPolicy.literalsOnly.trusts(nil))
        #expect(!HostPolicy.literalsOnly.trusts("trellis.lan"))
        #expect(try HostPolicy.parse(" * ").get().trusts("evil.example:1"))
    }

    @Test(
        "the list: empty entries ignored, anything but a host name refused naming the entry",
        arguments: [
            ("", true), (" , ", true), ("a.lan, b-c.local", true), ("*", true), ("a.lan:3000", false),
            ("http://a.lan", false),
            ("a lan", false), (".a.lan", false), ("a.lan/x", false)
        ])
    func parse(list: String, valid: Bool) {
        switch HostPolicy.parse(list) {
        case .success: #expect(valid, "\(list)")
        case let .failure(error):
            #expect(!valid, "\(list)")
            #expect(error.description.contains("is not a host name"))
        }
    }

    @Test("a page's request: it names an origin, or Sec-Fetch-Site other than none")
    func fromPage() {
        #expect(HostPolicy.isFromPage(origin: "http://a.lan", fetchSite: nil))
        #expect(HostPolicy.isFromPage(origin: nil, fetchSite: "same-origin"))
        #expect(HostPolicy.isFromPage(origin: nil, fetchSite: "cross-site"))
        #expect(!HostPolicy.isFromPage(origin: nil, fetchSite: "none"))
        #expect(!HostPolicy.isFromPage(origin: nil, fetchSite: nil))
    }
}
