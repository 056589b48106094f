import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore
import ServiceLifecycle
import TrellisRelay
import TrellisSocketIO

/// `--socketio`: the button service for Socket.IO clients (the P2O iOS, Android and web apps),
/// served by Hummingbird on `/socket.io/`: Engine.IO 3 / Socket.IO 4 and Engine.IO 4 / Socket.IO 5,
/// HTTP long-polling and WebSocket (HummingbirdWebSocket), on one path.
///
/// The protocol lives in `TrellisSocketIO`; here are the transports: a long poll answers with the
/// packets a session has waiting (or waits for some), a POST feeds packets in, and a WebSocket
/// does both. A sweeper ticks every session's heartbeat once a second.
public struct SocketIOServer: Sendable {
    let sessions: SocketIOSessions
    let origins: SocketIOOrigins
    let logger: Logger

    /// The path every request of the protocol goes to.
    static let path = "socket.io"

    /// The press policy of `buttons.socketio_press_token_file`: off when empty, else the token the
    /// file holds (surrounding white space and a final newline dropped). An unreadable or empty
    /// file stops the start, naming the file and never its content.
    public static func pressPolicy(tokenFile: String) throws(PressTokenError) -> SocketIOPressPolicy {
        guard !tokenFile.isEmpty else { return .off }
        guard let text = try? String(contentsOfFile: tokenFile, encoding: .utf8) else {
            throw PressTokenError(description: "cannot read the Socket.IO press token file \(tokenFile)")
        }
        let token = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !token.isEmpty else {
            throw PressTokenError(description: "the Socket.IO press token file \(tokenFile) is empty")
        }
        return .token(token)
    }

    /// The press token file could not be used; names the file, never its content.
    public struct PressTokenError: Error, CustomStringConvertible {
        public var description: String
    }

    /// The HTTP service, with the sweeper running beside it.
    package static func service(address: ListenAddress, relay: RelayService, settings: SocketIOSettings, logger: Logger)
        -> ServiceGroup
    {
        let sessions = SocketIOSessions(relay: relay, settings: settings, logger: logger)
        let server = SocketIOServer(
            sessions: sessions, origins: SocketIOOrigins(policy: settings.origins, logger: logger), logger: logger)
        let router = server.router()
        let webSocketRouter = Router(context: SocketIORequestContext.self)
        webSocketRouter.ws(RouterPath(path)) { request, context in
            server.shouldUpgrade(request, from: context.address)
        } onUpgrade: { inbound, outbound, context in
            await server.webSocket(
                inbound: inbound, outbound: outbound, request: context.request,
                from: context.requestContext.address)
        }
        let gate = ConnectionGate(server: "socketio", limits: settings.connections, logger: logger)
        let webSocketResponder = webSocketRouter.buildResponder()
        let configuration = HTTP1WebSocketUpgradeChannel.Configuration(
            http1: .init(idleTimeout: gate.limits.idleTimeoutAmount),
            ws: .init(maxFrameSize: EngineIOLimits.defaults(.v4).maximumPayloadBytes, autoPing: .disabled))
        let application = Application(
            router: router,
            server: HTTPServerBuilder { responder in
                GuardedChannel(
                    inner: HTTP1WebSocketUpgradeChannel(
                        responder: responder, webSocketResponder: webSocketResponder,
                        configuration: configuration),
                    gate: gate, upgradable: true)
            },
            configuration: .init(address: .hostname(address.host, port: address.port), serverName: "trellis"),
            logger: logger)
        // A group shuts its services down in reverse order: the sessions first, which answers every
        // waiting long poll with Engine.IO's close, then the HTTP server, which waits for requests
        // in flight. The other way round, the server would wait out each long poll (55 s).
        return ServiceGroup(configuration: .init(services: [application, sessions], logger: logger))
    }

    /// The routes of the HTTP requests: handshakes and long polls (GET), packets (POST) and CORS
    /// preflights (OPTIONS). The WebSocket upgrade is the server's own (``service(address:relay:settings:logger:)``).
    func router() -> Router<SocketIORequestContext> {
        let router = Router(context: SocketIORequestContext.self)
        router.get(RouterPath(Self.path)) { request, context in
            if let refused = origins.refusal(request, metrics: sessions.metrics, now: sessions.now) {
                return forbidden(refused)
            }
            return await self.poll(request, from: context.address)
        }
        router.post(RouterPath(Self.path)) { request, _ in
            if let refused = origins.refusal(request, metrics: sessions.metrics, now: sessions.now) {
                return forbidden(refused)
            }
            return await self.post(request)
        }
        router.on(RouterPath(Self.path), method: .options) { request, _ in
            if let refused = origins.refusal(request, metrics: sessions.metrics, now: sessions.now) {
                return forbidden(refused)
            }
            return self.preflight(request)
        }
        return router
    }

    // MARK: Long-polling

    /// GET: a handshake without `sid`, else a long poll.
    func poll(_ request: Request, from address: String) async -> Response {
        let query = request.uri.queryParameters
        guard let version = EngineIOVersion(query: query.get("EIO")) else {
            return refuse(request, .unsupportedVersion)
        }
        // JSONP polling (`j=`), for browsers without XHR, is not served.
        guard query.get("transport") == "polling", query.get("j") == nil else {
            return refuse(request, .unknownTransport)
        }
        guard let sid = query.get("sid") else {
            switch await sessions.open(
                version: version, transport: .polling, address: address,
                token: query.get("token"), headerToken: Self.headerToken(request))
            {
            case let .failure(refusal): return refuse(request, refusal)
            case let .success(connection): return await respondWithOutgoing(request, connection, wait: false)
            }
        }
        guard let connection = sessions.find(sid), connection.version == version else {
            return refuse(request, .unknownSession)
        }
        guard connection.transport == .polling, !connection.isClosed else { return refuse(request, .badRequest) }
        guard connection.beginPoll() else {
            // Two polls at once: the client is confused; engine.io closes such a session too.
            await sessions.close(connection, .transportError)
            return refuse(request, .badRequest)
        }
        defer { connection.endPoll() }
        connection.update { $0.heard(now: sessions.now) }
        return await respondWithOutgoing(request, connection, wait: true)
    }

    /// Answers a poll with the packets waiting, waiting for some first when asked to.
    private func respondWithOutgoing(_ request: Request, _ connection: SocketIOConnection, wait: Bool) async -> Response
    {
        if wait { await connection.waitForOutgoing(timeout: .seconds(connection.longPollWait)) }
        // Drained only while polling is still the transport, checked under the same lock: once an
        // upgrade completed during the wait, what waits is the WebSocket's, and a client that
        // sent `5` no longer reads this answer.
        var packets = connection.update { $0.transport == .polling ? $0.drain() : [] }
        if packets.isEmpty { packets = [EngineIOPacket(.noop)] }
        let framing = EngineIOFraming(version: connection.version, base64: request.uri.queryParameters.get("b64"))
        return response(
            request, .ok, ByteBuffer(bytes: EngineIOPayload.encode(packets, framing)), contentType: framing.contentType)
    }

    /// POST: packets from the client, in any of the framings.
    func post(_ request: Request) async -> Response {
        let query = request.uri.queryParameters
        guard let version = EngineIOVersion(query: query.get("EIO")) else {
            return refuse(request, .unsupportedVersion)
        }
        guard query.get("transport") == "polling", query.get("j") == nil else {
            return refuse(request, .unknownTransport)
        }
        guard let sid = query.get("sid") else { return refuse(request, .badHandshakeMethod) }
        guard let connection = sessions.find(sid), connection.version == version, !connection.isClosed else {
            return refuse(request, .unknownSession)
        }
        let limit = connection.limits.maximumPayloadBytes
        var request = request
        let body: ByteBuffer
        do {
            body = try await request.collectBody(upTo: limit)
        } catch {
            sessions.metrics.malformed(EngineIOError.payloadTooLarge.rawValue)
            logger.debug("Socket.IO POST body over the limit", metadata: ["sid": "\(sid)", "limit": "\(limit)"])
            await sessions.close(connection, .transportError)
            return response(
                request, .contentTooLarge, #"{"code":3,"message":"Bad request"}"#, contentType: "application/json")
        }
        switch EngineIOPayload.decode(Array(buffer: body), version) {
        case let .failure(error):
            sessions.metrics.malformed(error.rawValue)
            logger.debug("malformed Socket.IO payload", metadata: ["sid": "\(sid)", "reason": "\(error.rawValue)"])
            await sessions.close(connection, .transportError)
            return refuse(request, .badRequest)
        case let .success(packets):
            connection.update { $0.heard(now: sessions.now) }
            for packet in packets {
                // Direct answers (`3probe`) come only over a WebSocket: a POST has none.
                _ = await sessions.receive(packet, via: .polling, on: connection)
            }
            return response(request, .ok, "ok", contentType: "text/html")
        }
    }

    /// OPTIONS: the CORS preflight of a browser polling from another origin.
    func preflight(_ request: Request) -> Response {
        var response = response(request, .noContent, "", contentType: nil)
        response.headers[.accessControlAllowMethods] = "GET, POST, OPTIONS"
        response.headers[.accessControlAllowHeaders] = request.headers[.accessControlRequestHeaders] ?? "Content-Type"
        return response
    }

    // MARK: Responses

    /// The errors of the Engine.IO protocol, answered with HTTP 400 (503 when full) and its JSON.
    enum Refusal: Error {
        case unknownTransport, unknownSession, badHandshakeMethod, badRequest, unsupportedVersion, full, addressLimit

        var code: Int {
            switch self {
            case .unknownTransport: 0
            case .unknownSession: 1
            case .badHandshakeMethod: 2
            case .badRequest: 3
            case .full, .addressLimit: 4
            case .unsupportedVersion: 5
            }
        }

        var message: String {
            switch self {
            case .unknownTransport: "Transport unknown"
            case .unknownSession: "Session ID unknown"
            case .badHandshakeMethod: "Bad handshake method"
            case .badRequest: "Bad request"
            case .full: "Too many sessions"
            case .addressLimit: "Too many sessions from this address"
            case .unsupportedVersion: "Unsupported protocol version"
            }
        }

        var label: String {
            switch self {
            case .unknownTransport: "unknown_transport"
            case .unknownSession: "unknown_session"
            case .badHandshakeMethod: "bad_handshake_method"
            case .badRequest: "bad_request"
            case .full: "too_many_sessions"
            case .addressLimit: "address_limit"
            case .unsupportedVersion: "unsupported_version"
            }
        }
    }

    func refuse(_ request: Request, _ refusal: Refusal) -> Response {
        sessions.metrics.refused(refusal.label)
        let status: HTTPResponse.Status =
            switch refusal {
            case .full: .serviceUnavailable
            case .addressLimit: .tooManyRequests
            default: .badRequest
            }
        return response(
            request, status,
            #"{"code":\#(refusal.code),"message":"\#(refusal.message)"}"#, contentType: "application/json")
    }

    /// A response with engine.io's CORS headers, for allowed origins only (``corsHeaders(_:into:)``).
    func response(_ request: Request, _ status: HTTPResponse.Status, _ body: String, contentType: String?) -> Response {
        response(request, status, ByteBuffer(string: body), contentType: contentType)
    }

    func response(_ request: Request, _ status: HTTPResponse.Status, _ body: ByteBuffer, contentType: String?)
        -> Response
    {
        var headers = HTTPFields()
        if let contentType { headers[.contentType] = contentType }
        corsHeaders(request, into: &headers)
        return Response(status: status, headers: headers, body: .init(byteBuffer: body))
    }
}

/// The request context of the endpoint: Hummingbird's, plus the WebSocket handler reference and
/// the client's IP address, which the per-address session limit counts.
struct SocketIORequestContext: RequestContext, WebSocketRequestContext, RemoteAddressRequestContext {
    var coreContext: CoreRequestContextStorage
    let webSocket: WebSocketHandlerReference<SocketIORequestContext>
    let remoteAddress: SocketAddress?

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        webSocket = .init()
        remoteAddress = source.channel.remoteAddress
    }

    /// The IP address alone (the port changes with every connection); "unknown" when the channel
    /// has none, which then share one limit.
    var address: String { remoteAddress?.ipAddress ?? "unknown" }
}
