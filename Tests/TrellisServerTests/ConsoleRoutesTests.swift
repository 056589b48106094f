import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing
import TrellisCore
import TrellisMQTTTypes
import TrellisRelay
import TrellisStore
import TrellisTestSupport
@testable import TrellisServer

/// The console's routes in process, over a relay's real store (no port bound): each page's content
/// from what the test stored, the headers every answer carries, and the access rules.
@Suite("Console routes, in process")
struct ConsoleRoutesTests {
    static func routes(_ relay: RelayService, login: ConsoleLogin? = nil) -> some ApplicationProtocol {
        Application(router: ConsoleServer.router(relay: relay, probes: Probes(relay: relay), login: login))
    }

    static func get(
        _ client: some TestClientProtocol, _ uri: String, method: HTTPRequest.Method = .get, headers: HTTPFields = [:]
    ) async throws -> (status: HTTPResponse.Status, body: String, headers: HTTPFields) {
        try await client.execute(uri: uri, method: method, headers: headers) {
            ($0.status, String(buffer: $0.body), $0.headers)
        }
    }

    @Test("each page shows what the store holds, escaped, with the strict headers", arguments: StoreKind.bothStores)
    func pages(_ kind: StoreKind) async throws {
        try await withUnconnectedService(kind) { relay in
            try await ConsoleFixture.fill(relay.engine.store)
            try await Self.routes(relay).test(.router) { client in
                let overview = try await Self.get(client, "/")
                #expect(overview.status == .ok)
                #expect(overview.headers[.contentType] == "text/html; charset=utf-8")
                let policy = try #require(overview.headers[.contentSecurityPolicy])
                #expect(policy.contains("default-src 'none'") && policy.contains("frame-ancestors 'none'"))
                #expect(!policy.contains("script-src") && !policy.contains("unsafe"))
                #expect(overview.headers[.xContentTypeOptions] == "nosniff")
                #expect(overview.headers[HTTPField.Name("Referrer-Policy")!] == "no-referrer")
                // Not connected to a broker: not ready, as /readyz would say.
                #expect(overview.body.contains(#"data-status="unavailable""#), "\(overview.body)")
                #expect(overview.body.contains("<dt>Dead letters kept</dt><dd>1</dd>"), "\(overview.body)")

                let plants = try await Self.get(client, "/plants")
                #expect(plants.body.contains(">Basil</a></h2>") && plants.body.contains("&lt;b&gt;Fern&lt;/b&gt;"))
                #expect(!plants.body.contains("<b>Fern"))
                #expect(plants.body.contains("<dd>sweet basil (OCBA)</dd>"), "\(plants.body)")
                #expect(plants.body.contains("<dt>Care alerts</dt><dd>dry on 0x36</dd>"))
                let basil = try await Self.get(client, "/plants/Basil")
                #expect(basil.status == .ok && basil.body.contains("<polyline class=\"moisture\""), "\(basil.body)")
                #expect(basil.body.contains(#"href="/plants/Basil?since=7d" aria-current="page""#))
                let day = try await Self.get(client, "/plants/Basil?since=24h")
                #expect(day.body.contains(#"href="/plants/Basil?since=24h" aria-current="page""#))
                let fern = try await Self.get(client, "/plants/" + HTML.pathSegment(ConsoleFixture.hostilePlant))
                #expect(fern.status == .ok && fern.body.contains("Plant &lt;b&gt;Fern&lt;/b&gt;"), "\(fern.body)")
                #expect(try await Self.get(client, "/plants/nobody").status == .notFound)

                let buttons = try await Self.get(client, "/buttons")
                #expect(buttons.body.contains("<th scope=\"row\">door-1</th><td>3</td>"), "\(buttons.body)")
                let devices = try await Self.get(client, "/devices")
                #expect(devices.body.contains(#"<a href="/devices/dev-online">dev-online</a>"#))
                #expect(devices.body.contains("<span class=\"ok\">online</span>"))
                #expect(devices.body.contains("<span class=\"bad\">offline</span>"))
                let device = try await Self.get(client, "/devices/dev-online")
                #expect(device.body.contains("boot ok &lt;script&gt;alert(1)&lt;/script&gt;"), "\(device.body)")
                #expect(try await Self.get(client, "/devices/none").status == .notFound)
                let letters = try await Self.get(client, "/dead-letters")
                #expect(letters.body.contains(#"<span class="reason">invalid_op</span>"#))
                #expect(letters.body.contains("&lt;/script&gt;&lt;svg onload=alert(1)&gt;"))
                // A request and a reading handled by the relay: the live view shows them decoded, newest
                // first, filtered as `trellis watch` filters; a filter it cannot read is a 400 saying why.
                try await ConsoleFixture.handle(relay, ConsoleFixture.liveRequest, on: "rpi/torpi/ann")
                try await ConsoleFixture.handle(relay, #"{"moisture":5}"#, on: "rpi/sensors/0x36")
                let live = try await Self.get(client, "/live")
                #expect(live.status == .ok && live.body.contains("trellis watch"))
                #expect(live.body.contains(ConsoleFixture.liveSummary), "\(live.body)")
                let request = try #require(live.body.range(of: ConsoleFixture.liveSummary))
                let reading = try #require(live.body.range(of: "reading of 0x36"))
                #expect(reading.lowerBound < request.lowerBound, "newest first")
                let plantOnly = try await Self.get(client, "/live?service=plant&client=ann")
                #expect(plantOnly.body.contains(ConsoleFixture.liveSummary) && !plantOnly.body.contains("reading of"))
                let refused = try await Self.get(client, "/live?verdict=bogus")
                #expect(refused.status == .badRequest && refused.body.contains("a verdict is one of"))
                let css = try await Self.get(client, "/console.css")
                #expect(css.headers[.contentType] == "text/css; charset=utf-8" && css.body.contains("@media"))
                for page in [overview, plants, basil, buttons, devices, device, letters, live] {
                    #expect(!page.body.contains("<script"))
                }
            }
        }
    }

    @Test("the console only reads: every method but GET is 405; a foreign Origin is 403, its own is served")
    func readOnly() async throws {
        try await withUnconnectedService(.inMemory) { relay in
            try await Self.routes(relay).test(.router) { client in
                for method in [HTTPRequest.Method.post, .put, .delete, .patch, .head, .options] {
                    let refused = try await Self.get(client, "/plants", method: method)
                    #expect(refused.status == .methodNotAllowed, "\(method)")
                    #expect(refused.headers[.allow] == "GET")
                    #expect(refused.headers[.contentSecurityPolicy] != nil)
                }
                let foreign = try await Self.get(
                    client, "/", method: .post, headers: [.origin: "http://evil.example"])
                #expect(foreign.status == .forbidden)
                let foreignRead = try await Self.get(
                    client, "/", headers: [.origin: "http://evil.example"])
                #expect(foreignRead.status == .forbidden)
                // The router test's requests are for `localhost`.
                let own = try await Self.get(client, "/", headers: [.origin: "http://localhost"])
                #expect(own.status == .ok)
            }
        }
    }

    @Test(
        "bound beyond loopback the console needs the operator's account: none refuses to start, a wrong password is 401"
    )
    func login() async throws {
        #expect(ConsoleServer.isLoopback("127.0.0.1") && ConsoleServer.isLoopback("::1"))
        #expect(ConsoleServer.isLoopback("localhost") && ConsoleServer.isLoopback("127.8.9.10"))
        #expect(
            !ConsoleServer.isLoopback("0.0.0.0") && !ConsoleServer.isLoopback("::")
                && !ConsoleServer.isLoopback("192.168.1.2"))
        #expect(try ConsoleServer.requiredLogin(at: ListenAddress("127.0.0.1:9470")!, login: nil) == nil)
        #expect(throws: ConsoleServer.AccessError.self) {
            try ConsoleServer.requiredLogin(at: ListenAddress("0.0.0.0:9470")!, login: nil)
        }
        let login = ConsoleLogin { user, password in user == "operator" && password == "s3cret" }
        #expect(try ConsoleServer.requiredLogin(at: ListenAddress("[::]:9470")!, login: login) != nil)
        try await withUnconnectedService(.inMemory) { relay in
            try await Self.routes(relay, login: login).test(.router) { client in
                let none = try await Self.get(client, "/")
                #expect(none.status == .unauthorized)
                #expect(none.headers[.wwwAuthenticate] == #"Basic realm="Trellis console", charset="UTF-8""#)
                let wrong = try await Self.get(client, "/", headers: [.authorization: Self.basic("operator", "guess")])
                #expect(wrong.status == .unauthorized)
                let other = try await Self.get(client, "/", headers: [.authorization: Self.basic("trellis", "s3cret")])
                #expect(other.status == .unauthorized)
                let right = try await Self.get(
                    client, "/plants", headers: [.authorization: Self.basic("operator", "s3cret")])
                #expect(right.status == .ok)
                let post = try await Self.get(
                    client, "/plants", method: .post, headers: [.authorization: Self.basic("operator", "s3cret")])
                #expect(post.status == .methodNotAllowed)
                // Guessing is slowed down: after the limit of wrong logins, even the right one waits.
                for _ in 2..<ConsoleLoginThrottle.limit {
                    _ = try await Self.get(client, "/", headers: [.authorization: Self.basic("operator", "guess")])
                }
                let throttled = try await Self.get(
                    client, "/", headers: [.authorization: Self.basic("operator", "s3cret")])
                #expect(throttled.status == .tooManyRequests)
                #expect(Int(throttled.headers[.retryAfter] ?? "") ?? 0 > 0)
            }
        }
    }

    @Test("the login throttle counts wrong logins per address within a window, and forgets them after it")
    func throttleWindow() {
        let throttle = ConsoleLoginThrottle()
        let start = ContinuousClock.now
        for _ in 0..<ConsoleLoginThrottle.limit - 1 { throttle.failed("192.0.2.1", now: start) }
        #expect(throttle.blocked("192.0.2.1", now: start) == nil)
        throttle.failed("192.0.2.1", now: start)
        #expect(throttle.blocked("192.0.2.1", now: start + .seconds(1)) == 59)
        #expect(throttle.blocked("192.0.2.2", now: start + .seconds(1)) == nil)
        #expect(throttle.blocked("192.0.2.1", now: start + ConsoleLoginThrottle.window) == nil)
        throttle.failed("192.0.2.1", now: start + ConsoleLoginThrottle.window)
        #expect(throttle.blocked("192.0.2.1", now: start + ConsoleLoginThrottle.window) == nil)
    }

    static func basic(_ user: String, _ password: String) -> String {
        "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
    }
}

/// What the console tests put in the store, and so expect to read on the pages: two plants (one
/// with a hostile name, one linked to a species and dry) with readings over the last days, a button pressed three times, two
/// devices (one online with a log line), and a dead letter.
enum ConsoleFixture {
    static let plant = "Basil"
    /// Basil's care alerts as the browse facts give them (linked to sweet basil, dry on one sensor).
    static let plantAlerts = "dry on 0x36"
    static let hostilePlant = #"<b>Fern</b>"#
    static let button = "door-1"
    static let presses = 3
    static let onlineDevice = "dev-online"
    static let offlineDevice = "dev-offline"
    static let logLine = "boot ok <script>alert(1)</script>"
    static let deadLetterReason = "invalid_op"
    static let deadLetterTopic = "rpi/Host-RPI3B+/request"
    static let deadLetterPayload = #"ID:1;operation:</script><svg onload=alert(1)>"#

    /// Fills `store` and waits until everything is written.
    /// A plant-tracker request for the live view, and how the view shows it.
    static let liveRequest = "ID:77;sender:ann;receiver:Host-RPI3B+;payload:;operation:REQ_numPlants"
    static let liveSummary = "REQ_numPlants #77 from ann"

    /// Handles `payload` on `topic` as the relay's message loop does, keeping it for the live view.
    static func handle(_ relay: RelayService, _ payload: String, on topic: String) async throws {
        let message = MQTTMessage(topic: topic, payload: Array(payload.utf8), qos: .atLeastOnce)
        let output = await relay.engine.handle(message, at: Date())
        _ = relay.engine.watch.saw(message, publishes: output.publishes, at: Date())
    }

    static func fill(_ store: any TrellisStore, now: Date = Date()) async throws {
        _ = try await store.addPlant(name: plant, sensors: ["0x36", "0x37"], maxPlants: 10)
        _ = try await store.addPlant(name: hostilePlant, sensors: ["0x38"], maxPlants: 10)
        for hour in stride(from: 48, through: 1, by: -1) {
            let at = now.addingTimeInterval(-Double(hour) * 3600)
            try await store.recordReading(
                sensor: "0x36", moisture: 3 + hour % 6, temperature: 65 + Double(hour % 8), at: at)
            try await store.recordReading(sensor: "0x38", moisture: 8, temperature: 70, at: at)
        }
        _ = try await store.upsertSpecies([
            Species(
                symbol: "OCBA", scientificName: "Ocimum basilicum", commonName: "sweet basil", moistureUse: .high,
                shadeTolerance: .intolerant, minTempF: 40)
        ])
        _ = try await store.linkPlant(plant: plant, symbol: "OCBA", at: now)
        _ = try await store.updateCareAlerts(
            plant: plant, conditions: [CareCondition(kind: .dry, sensor: "0x36", value: 4, limit: 6)], at: now)
        for index in 0..<presses {
            _ = try await store.recordPress(
                button: button, at: now.addingTimeInterval(Double(index - presses)), historyLimit: 20)
        }
        _ = try await store.recordDeviceStatus(id: onlineDevice, powerstate: .online, maxDevices: 100, at: now)
        _ = try await store.recordDeviceStatus(id: offlineDevice, powerstate: .offline, maxDevices: 100, at: now)
        try await store.appendDeviceLog(
            device: onlineDevice, entry: DeviceLogEntry(timestamp: now, type: "Device", message: logLine), limit: 200)
        try await store.recordDeadLetter(
            reason: deadLetterReason, topic: deadLetterTopic, payload: Array(deadLetterPayload.utf8), at: now)
        try await store.flush()
    }
}
