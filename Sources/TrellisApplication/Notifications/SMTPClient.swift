import NIOCore
import NIOPosix
import NIOSSL
import NIOTLS
import TrellisCore

/// Holds one TCP connection to an SMTP server and carries out an ``SMTPConversation``: the
/// conversation decides each step, this does it. Bounded in time (connecting, and the whole
/// exchange) and, through ``SMTPReplyReader``, in what the server may send.
enum SMTPClient {
    /// Where the server is and how TLS starts.
    struct Server: Sendable {
        var host: String
        var port: Int
        /// TLS from the first byte (`smtps://`) rather than by STARTTLS.
        var implicitTLS: Bool
        /// `host:port`, the server's only name in reasons.
        var name: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
        /// The name TLS asks for (SNI) and checks the certificate against; nil for an IP address,
        /// whose certificate is checked against the address connected to.
        var tlsName: String? {
            host.allSatisfy { $0.isNumber || $0 == "." } || host.contains(":") ? nil : host
        }
    }

    /// Carries out `conversation` with `server`; TLS checks the server's certificate with `tls`.
    static func deliver(
        _ conversation: SMTPConversation, to server: Server, tls: NIOSSLContext, connectTimeout: TimeAmount,
        timeout: TimeAmount, group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) async -> NotificationDelivery {
        let loop = group.next()
        let outcome = loop.makePromise(of: Void.self)
        let started = NIODeadline.now()
        let bootstrap = ClientBootstrap(group: loop)
            .connectTimeout(min(connectTimeout, timeout))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    if server.implicitTLS {
                        try pipeline.addHandler(NIOSSLClientHandler(context: tls, serverHostname: server.tlsName))
                    }
                    try pipeline.addHandler(
                        SMTPHandler(conversation: conversation, server: server, tls: tls, outcome: outcome))
                }
            }
        let channel: any Channel
        do {
            channel = try await bootstrap.connect(host: server.host, port: server.port).get()
        } catch {
            outcome.fail(SMTPFailure(reason: "cannot connect to \(server.name): \(error)"))
            return .failed("cannot connect to \(server.name): \(error)")
        }
        let limit = loop.scheduleTask(deadline: started + timeout) {
            outcome.fail(
                SMTPFailure(reason: "\(server.name) did not finish within \(timeout.nanoseconds / 1_000_000_000) s"))
            channel.close(promise: nil)
        }
        defer { limit.cancel() }
        do {
            // A stop of the service does not wait for the server: the connection is closed.
            try await withTaskCancellationHandler {
                try await outcome.futureResult.get()
            } onCancel: {
                outcome.fail(SMTPFailure(reason: "stopped while talking to \(server.name)"))
                channel.close(promise: nil)
            }
            return .sent
        } catch let failure as SMTPFailure {
            return .failed(failure.reason)
        } catch {
            return .failed("\(server.name): \(error)")
        }
    }
}

/// Why a conversation ended without the message sent; never holds the password.
struct SMTPFailure: Error {
    var reason: String
}

/// The connection's end of the conversation, on its event loop: replies are read from the bytes
/// that arrive, each step is done as the conversation says, and the outcome settles once.
final class SMTPHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private var conversation: SMTPConversation
    private var reader = SMTPReplyReader()
    private let server: SMTPClient.Server
    private let tls: NIOSSLContext
    private let outcome: EventLoopPromise<Void>
    /// Whether STARTTLS was answered and the handshake is under way.
    private var startingTLS = false

    init(conversation: SMTPConversation, server: SMTPClient.Server, tls: NIOSSLContext, outcome: EventLoopPromise<Void>)
    {
        (self.conversation, self.server, self.tls, self.outcome) = (conversation, server, tls, outcome)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        switch reader.read(buffer.readableBytesView) {
        case .needMore: return
        case let .failed(reason): act(.failed("\(server.name) \(reason)"), context)
        case let .reply(reply): act(conversation.receive(reply), context)
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if startingTLS, case .handshakeCompleted? = event as? TLSUserEvent {
            startingTLS = false
            act(conversation.tlsStarted(), context)
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        let during = startingTLS || server.implicitTLS ? "TLS with \(server.name) failed" : "\(server.name)"
        act(.failed("\(during): \(error)"), context)
    }

    func channelInactive(context: ChannelHandlerContext) {
        act(conversation.closed(), context)
        context.fireChannelInactive()
    }

    private func act(_ action: SMTPConversation.Action, _ context: ChannelHandlerContext) {
        switch action {
        case let .send(bytes):
            context.writeAndFlush(wrapOutboundOut(ByteBuffer(bytes: bytes)), promise: nil)
        case .startTLS:
            // Added in this read, before the next: nothing more is taken in clear.
            do {
                let handler = try NIOSSLClientHandler(context: tls, serverHostname: server.tlsName)
                try context.pipeline.syncOperations.addHandler(handler, position: .first)
                startingTLS = true
            } catch {
                act(.failed("cannot start TLS with \(server.name): \(error)"), context)
            }
        case let .finish(bytes):
            outcome.succeed()
            guard context.channel.isActive, !bytes.isEmpty else { return }
            let channel = context.channel
            context.writeAndFlush(wrapOutboundOut(ByteBuffer(bytes: bytes))).whenComplete { _ in
                channel.close(promise: nil)
            }
        case let .failed(reason):
            outcome.fail(SMTPFailure(reason: reason))
            context.close(promise: nil)
        }
    }
}
