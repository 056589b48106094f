import Testing
import TrellisMQTT

@Suite("Broker addresses")
struct BrokerURLTests {
    struct Good: Sendable, CustomTestStringConvertible {
        var text: String
        var scheme: BrokerURL.Scheme
        var host: String
        var port: Int
        var username: String? = nil
        var password: String? = nil
        var shown: String
        var testDescription: String { text }
    }

    static let good: [Good] = [
        Good(text: "127.0.0.1:1883", scheme: .mqtt, host: "127.0.0.1", port: 1883, shown: "mqtt://127.0.0.1:1883"),
        Good(
            text: "broker.example", scheme: .mqtt, host: "broker.example", port: 1883,
            shown: "mqtt://broker.example:1883"),
        Good(text: "mqtt://127.0.0.1", scheme: .mqtt, host: "127.0.0.1", port: 1883, shown: "mqtt://127.0.0.1:1883"),
        Good(
            text: "mqtt://127.0.0.1:1884", scheme: .mqtt, host: "127.0.0.1", port: 1884, shown: "mqtt://127.0.0.1:1884"),
        Good(
            text: "mqtts://broker.example", scheme: .mqtts, host: "broker.example", port: 8883,
            shown: "mqtts://broker.example:8883"),
        Good(
            text: "MQTTS://pi-4.local:18883/", scheme: .mqtts, host: "pi-4.local", port: 18883,
            shown: "mqtts://pi-4.local:18883"),
        Good(text: "mqtts://[::1]:8883", scheme: .mqtts, host: "::1", port: 8883, shown: "mqtts://[::1]:8883"),
        Good(text: "mqtts://[::1]", scheme: .mqtts, host: "::1", port: 8883, shown: "mqtts://[::1]:8883"),
        Good(text: "[::1]:1883", scheme: .mqtt, host: "::1", port: 1883, shown: "mqtt://[::1]:1883"),
        Good(text: "[fd00::2]", scheme: .mqtt, host: "fd00::2", port: 1883, shown: "mqtt://[fd00::2]:1883"),
        Good(
            text: "mqtt://alice@127.0.0.1", scheme: .mqtt, host: "127.0.0.1", port: 1883, username: "alice",
            shown: "mqtt://127.0.0.1:1883"),
        Good(
            text: "mqtts://trellis:s3cret@broker.example:8884", scheme: .mqtts, host: "broker.example", port: 8884,
            username: "trellis", password: "s3cret", shown: "mqtts://broker.example:8884"),
        Good(
            text: "mqtts://a%40b:p%3Aw%2F%25@[::1]", scheme: .mqtts, host: "::1", port: 8883,
            username: "a@b", password: "p:w/%", shown: "mqtts://[::1]:8883"),
        Good(
            text: "mqtt://bob:@h", scheme: .mqtt, host: "h", port: 1883, username: "bob", password: "",
            shown: "mqtt://h:1883"),
        Good(
            text: "mqtt://u:with@at@h:2", scheme: .mqtt, host: "h", port: 2, username: "u", password: "with@at",
            shown: "mqtt://h:2")
    ]

    @Test("allowed forms", arguments: good)
    func parses(_ expected: Good) throws {
        let url = try BrokerURL(parsing: expected.text)
        #expect(url.scheme == expected.scheme)
        #expect(url.host == expected.host)
        #expect(url.port == expected.port)
        #expect(url.username == expected.username)
        #expect(url.password == expected.password)
        #expect(url.usesTLS == (expected.scheme == .mqtts))
        #expect(url.description == expected.shown)
    }

    static let bad: [(text: String, problem: String)] = [
        ("mqtt:/x", "needs :// after its scheme"),
        ("mqtt:x", "the port must be a number"),
        ("http://broker.example", "the scheme http:// is not one Trellis speaks"),
        ("ws://127.0.0.1:9001", "the scheme ws:// is not one Trellis speaks"),
        ("://127.0.0.1", "the scheme is missing"),
        ("mqtt://127.0.0.1:0", "out of range 1-65535"),
        ("mqtts://127.0.0.1:65536", "out of range 1-65535"),
        ("127.0.0.1:99999", "out of range 1-65535"),
        ("127.0.0.1:", "the port must be a number"),
        ("127.0.0.1:-1", "the port must be a number"),
        ("mqtt://", "the host is empty"),
        ("mqtts://:8883", "the host is empty"),
        (":1883", "the host is empty"),
        ("", "the host is empty"),
        ("mqtt://[]:1883", "brackets hold an IPv6 address"),
        ("::1", "an IPv6 address goes in brackets"),
        ("mqtts://[::1:8883", "is not closed"),
        ("mqtts://[::1]8883", "only :PORT may follow"),
        ("mqtt://host/topic", "has no path"),
        ("mqtt://host?x=1", "no query or fragment"),
        ("mqtt://bro ker", "only letters, digits"),
        ("user:pw@host:1883", "user info needs the mqtt:// or mqtts:// form"),
        ("mqtt://:pw@host", "the user name before @ is empty"),
        ("mqtt://u:%zz@host", "bad %-escape")
    ]

    @Test("refused forms say what is wrong and what is allowed", arguments: bad)
    func refuses(_ text: String, _ problem: String) {
        #expect {
            try BrokerURL(parsing: text)
        } throws: { error in
            let message = "\(error)"
            return message.contains(problem) && message.contains("mqtts://HOST[:PORT]")
                && message.contains("HOST[:PORT]")
        }
    }

    @Test(
        "an error never shows the password",
        arguments: [
            "mqtts://trellis:hunter2@broker.example:99999",
            "mqtt://trellis:hunter2@",
            "trellis:hunter2@broker.example",
            "http://trellis:hunter2@broker.example"
        ])
    func errorsAreMasked(_ text: String) {
        do {
            _ = try BrokerURL(parsing: text)
            Issue.record("\(text) should be refused")
        } catch {
            #expect(!"\(error)".contains("hunter2"))
            #expect(!"\(error)".contains("trellis:"))
            #expect("\(error)".contains("***@"))
        }
    }

    @Test("masking keeps the address and hides the user info")
    func masking() {
        #expect(BrokerURL.masked("mqtts://u:p@h:1/") == "mqtts://***@h:1/")
        #expect(BrokerURL.masked("mqtt://h:1883") == "mqtt://h:1883")
        #expect(BrokerURL.masked("u:p@h") == "***@h")
        #expect(BrokerURL.masked("mqtt://h/a@b") == "mqtt://h/a@b")
    }
}
