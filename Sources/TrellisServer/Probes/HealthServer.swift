import Foundation
import Hummingbird
import Logging
import ServiceLifecycle
import TrellisSocketIO

/// The probes over HTTP: `/livez`, `/readyz`, and `/health` (the readiness of earlier releases,
/// in its own words). Served by the metrics server when `--metrics` is on, and on their own at
/// `--health` (`health.address`) whether or not metrics are exported.
package enum HealthServer {
    /// Adds the probe routes to `router`.
    static func addRoutes<Context: RequestContext>(to router: Router<Context>, probes: Probes) {
        router.get("/livez") { _, _ -> Response in
            respond(await probes.liveness())
        }
        router.get("/readyz") { _, _ -> Response in
            respond(await probes.readiness())
        }
        router.get("/health") { _, _ -> Response in
            legacy(await probes.readiness())
        }
    }

    /// The probes alone, at `address`.
    package static func service(
        address: ListenAddress, probes: Probes, limits: ConnectionLimits, hosts: HostPolicy,
        logger: Logger
    ) -> some Service {
        let router = Router()
        router.add(middleware: HostGuard(server: "health", hosts: hosts, logger: logger))
        addRoutes(to: router, probes: probes)
        return Application(
            router: router, server: .http1(server: "health", limits: limits, logger: logger),
            configuration: .init(address: .hostname(address.host, port: address.port), serverName: "trellis"),
            logger: logger)
    }

    static func respond(_ answer: Probes.Answer) -> Response {
        Response(
            status: answer.healthy ? .ok : .serviceUnavailable, headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(bytes: answer.body)))
    }

    /// `/health` as earlier releases answered it: `status` `ok` or `unavailable`, with the broker
    /// and store figures flat.
    static func legacy(_ answer: Probes.Answer) -> Response {
        let store = answer.checks["store"], backlog = answer.checks["backlog"]
        var body: [String: Any] = [
            "status": answer.healthy ? "ok" : "unavailable",
            "broker_connected": answer.checks["broker"]?.ok ?? false,
            "store_writable": store?.ok ?? false,
            "store_failed_commits": store?.detail["failed_commits"] ?? 0,
            "store_unwritten_changes": backlog?.detail["unwritten_changes"] ?? 0,
            "oldest_unwritten_change_s": backlog?.detail["oldest_unwritten_change_s"] ?? 0
        ]
        if let error = store?.error { body["store_error"] = error }
        let data = (try? JSONSerialization.data(withJSONObject: body, options: [.sortedKeys])) ?? Data()
        return Response(
            status: answer.healthy ? .ok : .serviceUnavailable, headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}
