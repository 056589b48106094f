import Foundation
import Hummingbird
import Logging
import ServiceLifecycle
import TrellisCore
import TrellisRelay
import TrellisSocketIO

/// `--console` (`console.address`): read-only pages of the relay's state for a browser, rendered
/// on the server from the store (``ConsolePage``), behind ``ConsoleAccess`` and the ``HostGuard``.
/// Open on a loopback address; beyond loopback, only with the operator's account (``ConsoleLogin``),
/// and it refuses to start without one.
public enum ConsoleServer {
    /// Why the console cannot start as configured.
    public struct AccessError: Error, CustomStringConvertible {
        public var description: String
    }

    /// Whether `host` is a loopback address (127.0.0.0/8, ::1) or `localhost`: only this machine reaches it.
    public static func isLoopback(_ host: String) -> Bool {
        let lowered = host.lowercased()
        if lowered == "localhost" || lowered == "::1" || lowered == "0:0:0:0:0:0:0:1" { return true }
        let octets = lowered.split(separator: ".", omittingEmptySubsequences: false)
        return octets.count == 4 && octets[0] == "127" && octets.allSatisfy { UInt8($0) != nil }
    }

    /// The login the console at `address` asks for: none on loopback, `login` beyond it. Throws
    /// ``AccessError`` when the console would be reachable from other machines without a login.
    public static func requiredLogin(at address: ListenAddress, login: ConsoleLogin?) throws -> ConsoleLogin? {
        if isLoopback(address.host) { return nil }
        guard let login else {
            throw AccessError(
                description:
                    "console.address \(address) is reachable beyond this machine, and the console then needs the operator's account, which only the broker Trellis starts with its local accounts has (broker.conf's password_file); bind the console to 127.0.0.1 or [::1] (and reach it through SSH or a proxy), or let Trellis start its broker"
            )
        }
        return login
    }

    /// The HTTP service at `address`; throws as ``requiredLogin(at:login:)`` does.
    package static func service(
        address: ListenAddress, relay: RelayService, probes: Probes, login: ConsoleLogin?, limits: ConnectionLimits,
        hosts: HostPolicy, logger: Logger
    ) throws -> some Service {
        let required = try requiredLogin(at: address, login: login)
        return Application(
            router: router(relay: relay, probes: probes, login: required, hosts: hosts, logger: logger),
            server: .http1(server: "console", limits: limits, logger: logger),
            configuration: .init(address: .hostname(address.host, port: address.port), serverName: "trellis"),
            logger: logger)
    }

    /// The console's routes behind the host guard and its access rules.
    static func router(
        relay: RelayService, probes: Probes, login: ConsoleLogin?, hosts: HostPolicy = .literalsOnly,
        logger: Logger = Logger(label: "trellis.http")
    ) -> Router<ConsoleRequestContext> {
        let router = Router(context: ConsoleRequestContext.self)
        router.add(middleware: ConsoleAccess(login: login))
        router.add(middleware: HostGuard(server: "console", hosts: hosts, logger: logger))
        let reader = ConsoleReader(relay: relay, probes: probes)
        router.get("/") { _, _ in await page { ConsolePage.overview(await reader.overview()) } }
        router.get("/plants") { _, _ in await page { ConsolePage.plants(try await reader.plants()) } }
        router.get("/plants/:name") { request, context in
            await page {
                let name = try context.parameters.require("name").removingPercentEncoding ?? ""
                let span =
                    ConsolePage.spans.first { $0.name == request.uri.queryParameters["since"].map(String.init) }
                    ?? ConsolePage.spans[1]
                let now = Date()
                let from = now.addingTimeInterval(-span.seconds)
                guard let points = try await reader.history(of: name, from: from, to: now) else {
                    return (.notFound, ConsolePage.notFound("No plant is named “\(name)”.", section: .plants))
                }
                return (.ok, ConsolePage.plantHistory(name: name, span: span.name, points: points, from: from, to: now))
            }
        }
        router.get("/buttons") { _, _ in await page { ConsolePage.buttons(try await reader.buttons()) } }
        router.get("/devices") { _, _ in await page { ConsolePage.devices(try await reader.devices()) } }
        router.get("/devices/:id") { _, context in
            await page {
                let id = try context.parameters.require("id").removingPercentEncoding ?? ""
                guard let (device, log) = try await reader.device(id) else {
                    return (.notFound, ConsolePage.notFound("No device has the id “\(id)”.", section: .devices))
                }
                return (.ok, ConsolePage.device(device, log: log))
            }
        }
        router.get("/dead-letters") { _, _ in
            await page { ConsolePage.deadLetters(try await reader.deadLetters(), limit: ConsoleReader.deadLetterLimit) }
        }
        router.get("/live") { request, _ in
            await page {
                var query: [String: String] = [:]
                for field in ConsolePage.liveFields {
                    query[field] = request.uri.queryParameters[Substring(field)].map(String.init)
                }
                let filter: WatchFilter
                do {
                    filter = try WatchFilter(parsing: ConsolePage.liveWords(query))
                } catch {
                    return (
                        .badRequest, ConsolePage.live(events: [], query: query, kept: 0, refusal: "\(error)")
                    )
                }
                let engine = relay.engine
                let events = engine.watch.trace(with: engine.describer, limit: ConsolePage.liveLimit) {
                    filter.admits($0)
                }
                return (
                    .ok, ConsolePage.live(events: events, query: query, kept: engine.watch.keptCount, refusal: nil)
                )
            }
        }
        router.get(RouterPath(ConsolePage.stylesheetPath)) { _, _ in
            Response(
                status: .ok, headers: [.contentType: "text/css; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(string: ConsoleStylesheet.text)))
        }
        router.get("/favicon.svg") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "image/svg+xml"],
                body: .init(byteBuffer: ByteBuffer(string: ConsolePage.favicon)))
        }
        return router
    }

    /// A page rendered by `body`, 200.
    static func page(_ body: () async throws -> HTML) async -> Response {
        await page { (.ok, try await body()) }
    }

    /// A page rendered by `body` with its status; a store that fails answers 503 with a page saying why.
    static func page(_ body: () async throws -> (HTTPResponse.Status, HTML)) async -> Response {
        let status: HTTPResponse.Status, html: HTML
        do {
            (status, html) = try await body()
        } catch {
            status = .serviceUnavailable
            html = ConsolePage.document(
                title: "Unavailable", section: nil,
                main: "<p>The state store did not answer: \(String(describing: error))</p>")
        }
        return Response(
            status: status, headers: [.contentType: "text/html; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(string: html.text)))
    }
}
