import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
import TrellisRelay
import TrellisTestSupport
@testable import TrellisServer

/// The probes and `/metrics` of a relay service in this process, asked through Hummingbird's router
/// test mode: no port is bound, the same routes answer as in `trellis run`. Readiness follows the
/// broker, so that test runs a relay against a real one; `/metrics` needs none.
@Suite("Probe and metrics routes, in process")
struct ProbeRoutesTests {
    /// The probe and metrics routes of `relay`, as `trellis run` serves them.
    static func routes(_ relay: RelayService) -> some ApplicationProtocol {
        Application(router: MetricsServer.router(relay: relay, probes: Probes(relay: relay)))
    }

    /// Decodes a probe's body: `{"status": …, "checks": {name: {"ok": …}}}`.
    static func probe(_ body: String) throws -> (status: String, failing: [String]) {
        let object = try #require(try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])
        let checks = try #require(object["checks"] as? [String: [String: Any]])
        let failing = checks.filter { ($0.value["ok"] as? Bool) != true }.keys.sorted()
        return (try #require(object["status"] as? String), failing)
    }

    @Test("a running relay is alive and ready; once it lost the broker it is alive and not ready")
    func readinessFollowsTheBroker() async throws {
        try await withRelay { harness in
            let relay = try #require(harness.service)
            let app = Self.routes(relay)
            try await app.test(.router) { client in
                let live = try await client.execute(uri: "/livez", method: .get) { $0 }
                #expect(live.status == .ok)
                #expect(try Self.probe(String(buffer: live.body)).status == "alive")
                let ready = try await client.execute(uri: "/readyz", method: .get) { $0 }
                let answer = try Self.probe(String(buffer: ready.body))
                #expect(ready.status == .ok, "\(answer)")
                #expect(answer.status == "ready" && answer.failing.isEmpty)
                try await client.execute(uri: "/health", method: .get) { response in
                    #expect(response.status == .ok)
                    #expect(String(buffer: response.body).contains(#""status":"ok""#))
                }
            }
            await harness.broker.stop()
            try await eventually("the relay sees the broker gone", timeout: .seconds(20)) { !relay.client.isConnected }
            try await app.test(.router) { client in
                let ready = try await client.execute(uri: "/readyz", method: .get) { $0 }
                let answer = try Self.probe(String(buffer: ready.body))
                #expect(ready.status == .serviceUnavailable)
                #expect(answer.status == "unavailable" && answer.failing == ["broker"], "\(answer)")
                try await client.execute(uri: "/livez", method: .get) { response in
                    #expect(response.status == .ok)
                }
            }
        }
    }

    @Test("/metrics answers Prometheus text with the process series")
    func metricsText() async throws {
        try await withUnconnectedService(.inMemory) { relay in
            try await Self.routes(relay).test(.router) { client in
                try await client.execute(uri: "/metrics", method: .get) { response in
                    #expect(response.status == .ok)
                    #expect(response.headers[.contentType]?.hasPrefix("text/plain; version=0.0.4") == true)
                    #expect(String(buffer: response.body).contains("process_resident_memory_bytes "))
                }
                try await client.execute(uri: "/nothing", method: .get) { response in
                    #expect(response.status == .notFound)
                }
            }
        }
    }
}
