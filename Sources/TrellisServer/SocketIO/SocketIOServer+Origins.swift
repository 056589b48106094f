import Foundation
import Hummingbird
import Logging
import Synchronization
import TrellisSocketIO

/// The endpoint's ``OriginPolicy`` at work: every long poll, POST, preflight and WebSocket upgrade
/// from a page whose origin is not allowed, or from a page that reached the endpoint by a `Host` name
/// not trusted (DNS rebinding), is refused, counted in `trellis_socketio_refused_total{reason}`
/// (`foreign_origin`, `unknown_host`) and logged at most once a minute per origin or host; CORS
/// headers name only an allowed origin.
final class SocketIOOrigins: Sendable {
    let policy: OriginPolicy
    private let reports = Mutex(RefusalReport())
    private let logger: Logger

    init(policy: OriginPolicy, logger: Logger) {
        self.policy = policy
        self.logger = logger
    }

    /// The decision for `request`: its `Origin` and `Sec-Fetch-Site` against its `Host` and the
    /// configured origins and host names.
    func decide(_ request: Request) -> OriginPolicy.Decision {
        policy.decide(
            origin: request.headers[.origin], host: request.head.authority,
            fetchSite: request.headers[.secFetchSite])
    }

    /// The refusal of `request`, if it is one (`foreign_origin` or `unknown_host`); counts it and
    /// logs it (at most once a minute per origin or host, with how many were refused since).
    func refusal(_ request: Request, metrics: SocketIOMetrics, now: Double) -> OriginPolicy.Decision? {
        let decision = decide(request)
        guard !decision.isAllowed else { return nil }
        metrics.refused(decision.rawValue)
        let origin = String((request.headers[.origin] ?? "").prefix(200))
        let host = String((request.head.authority ?? "").prefix(200))
        let key = decision == .foreign ? "origin " + origin : "host " + host
        if let refused = reports.withLock({ $0.record(key, now: now) }) {
            logger.warning(
                decision == .foreign
                    ? "Socket.IO requests from a foreign origin refused"
                    : "Socket.IO requests from a web page for an unknown host name refused",
                metadata: [
                    "origin": "\(origin)", "host": "\(host)", "refused": "\(refused)",
                    "setting": "\(decision == .foreign ? "buttons.socketio_allowed_origins" : "http.allowed_hosts")"
                ])
        }
        return decision
    }
}

extension SocketIOServer {
    /// The answer to a refused page, without CORS headers: 403 for a foreign origin, 421
    /// (Misdirected Request) for an unknown `Host` name.
    func forbidden(_ decision: OriginPolicy.Decision) -> Response {
        let body =
            decision == .unknownHost
            ? #"{"code":4,"message":"Misdirected: web pages may reach the endpoint by an IP address, localhost or a name in http.allowed_hosts"}"#
            : #"{"code":4,"message":"Forbidden: this page's origin may not use the endpoint (buttons.socketio_allowed_origins)"}"#
        return Response(
            status: decision == .unknownHost ? .misdirectedRequest : .forbidden,
            headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: body)))
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
        return SocketIOPressPolicy.headerToken(
            pressToken: request.headers.first { $0.name.canonicalName == name }?.value,
            authorization: request.headers[.authorization])
    }
}
