import Foundation
import Hummingbird
import Logging
import Synchronization
import TrellisSocketIO

/// The endpoint's ``OriginPolicy`` at work: every long poll, POST, preflight and WebSocket upgrade
/// from a page whose origin is not allowed is refused, counted in
/// `trellis_socketio_refused_total{reason="foreign_origin"}` and logged at most once a minute per
/// origin; CORS headers name only an allowed origin.
final class SocketIOOrigins: Sendable {
    let policy: OriginPolicy
    private let reports = Mutex(RefusalReport())
    private let logger: Logger

    init(policy: OriginPolicy, logger: Logger) {
        self.policy = policy
        self.logger = logger
    }

    /// The decision for `request`: its `Origin` against its `Host` and the configured origins.
    func decide(_ request: Request) -> OriginPolicy.Decision {
        policy.decide(origin: request.headers[.origin], host: request.head.authority)
    }

    /// Whether `request` comes from a foreign page; if so counts it and logs it (at most once a
    /// minute per origin, with how many were refused since).
    func refuses(_ request: Request, metrics: SocketIOMetrics, now: Double) -> Bool {
        guard decide(request) == .foreign else { return false }
        metrics.refused(OriginPolicy.Decision.foreign.rawValue)
        let origin = String((request.headers[.origin] ?? "").prefix(200))
        if let refused = reports.withLock({ $0.record(origin, now: now) }) {
            logger.warning("Socket.IO requests from a foreign origin refused", metadata: [
                "origin": "\(origin)", "host": "\(request.head.authority ?? "")", "refused": "\(refused)",
                "setting": "buttons.socketio_allowed_origins",
            ])
        }
        return true
    }
}

extension SocketIOServer {
    /// The answer to a request from a page whose origin is not allowed: 403, no CORS headers.
    func forbidden() -> Response {
        let body = #"{"code":4,"message":"Forbidden: this page's origin may not use the endpoint (buttons.socketio_allowed_origins)"}"#
        return Response(status: .forbidden, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: body)))
    }

    /// The CORS headers of an answer: an allowed `Origin` echoed with credentials (the web app polls
    /// with credentials from its own origin), `*` for a request without one; nothing for another.
    func corsHeaders(_ request: Request, into headers: inout HTTPFields) {
        guard let origin = request.headers[.origin] else {
            headers[.accessControlAllowOrigin] = "*"
            return
        }
        headers[.vary] = "Origin"
        guard origins.decide(request).isAllowed else { return }
        headers[.accessControlAllowOrigin] = origin
        headers[.accessControlAllowCredentials] = "true"
    }

    /// The press token in the handshake's headers (`X-Trellis-Press-Token`, `Authorization: Bearer`).
    static func headerToken(_ request: Request) -> String? {
        let name = SocketIOPressPolicy.headerName.lowercased()
        return SocketIOPressPolicy.headerToken(pressToken: request.headers.first { $0.name.canonicalName == name }?.value,
                                               authorization: request.headers[.authorization])
    }
}
