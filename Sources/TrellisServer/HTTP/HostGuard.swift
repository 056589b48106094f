import Foundation
import HTTPTypes
import Hummingbird
import Logging
import Metrics
import Synchronization
import TrellisSocketIO

/// Refuses a web page's request (``HostPolicy/isFromPage(origin:fetchSite:)``) that reached the
/// metrics or health server by a `Host` name the ``HostPolicy`` does not trust: a DNS-rebinding page
/// would otherwise read `/metrics` and the probes through the browser of whoever opened it.
/// Prometheus, kubelets, `curl`, `trellis health` and an address typed into a browser are not
/// pages, and pass. Each refusal is answered `421 Misdirected Request`, counted in
/// `trellis_http_requests_refused_total{server,reason="unknown_host"}` and logged at most once a
/// minute per host name. The Socket.IO endpoint checks hosts with its origins (``SocketIOOrigins``).
struct HostGuard<Context: RequestContext>: RouterMiddleware {
    let server: String
    let hosts: HostPolicy
    let logger: Logger
    private let reports = Reports()

    init(server: String, hosts: HostPolicy, logger: Logger) {
        self.server = server
        self.hosts = hosts
        self.logger = logger
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        let host = request.head.authority
        guard HostPolicy.isFromPage(origin: request.headers[.origin], fetchSite: request.headers[.secFetchSite]),
            !hosts.trusts(host)
        else {
            return try await next(request, context)
        }
        Counter(
            label: "trellis_http_requests_refused_total", dimensions: [("server", server), ("reason", "unknown_host")]
        ).increment()
        let name = String((host ?? "").prefix(200))
        if let refused = reports.record(name) {
            logger.warning(
                "HTTP requests from a web page for an unknown host name refused",
                metadata: [
                    "server": "\(server)", "host": "\(name)", "refused": "\(refused)", "setting": "http.allowed_hosts"
                ])
        }
        return Self.misdirected
    }

    /// 421 with a body naming the setting.
    static var misdirected: Response {
        let body =
            "Misdirected Request: web pages may reach this server by an IP address, localhost or a name in http.allowed_hosts\n"
        return Response(
            status: .misdirectedRequest, headers: [.contentType: "text/plain; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(string: body)))
    }

    /// The once-a-minute log lines, shared by the copies of the middleware.
    final class Reports: Sendable {
        private let report = Mutex(RefusalReport())
        private let started = ContinuousClock.now

        func record(_ host: String) -> Int? {
            let elapsed = ContinuousClock.now - started
            let now = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
            return report.withLock { $0.record(host, now: now) }
        }
    }
}

extension HTTPField.Name {
    /// `Sec-Fetch-Site`, which browsers add to every request a page or the user makes.
    static let secFetchSite = HTTPField.Name("Sec-Fetch-Site")!
}
