import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1

/// A server's child channel (Hummingbird's HTTP/1, or HTTP/1 with the WebSocket upgrade) behind a
/// ``ConnectionGate``: each accepted connection is counted in or closed at once, its first request
/// head must be complete within the header timeout and each request's body within the body timeout
/// (``RequestWatch``). The idle timeout is the inner channel's own (`HTTP1Channel.Configuration.idleTimeout`).
struct GuardedChannel<Inner: ServerChildChannel>: ServerChildChannel {
    typealias Value = Inner.Value
    let inner: Inner
    let gate: ConnectionGate
    /// Whether the inner channel upgrades a first request to a WebSocket.
    var upgradable = false

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let admitted = gate.admit(channel)
        return inner.setup(channel: channel, logger: logger).map { value in
            guard admitted else {
                // The pipeline is built so that Hummingbird ends its handling at once; the peer sees
                // the connection closed before any byte.
                channel.close(promise: nil)
                return value
            }
            do {
                let operations = channel.pipeline.syncOperations
                let decoder = try operations.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self)
                try operations.addHandler(RequestWatch(gate: gate, upgradable: upgradable), position: .after(decoder))
            } catch {
                // Closed meanwhile (evicted): nothing to watch.
                channel.close(promise: nil)
            }
            return value
        }.flatMapErrorThrowing { error in
            // NIO leaves a channel whose setup failed open and unhandled; close it here, which
            // also counts it out of the gate.
            channel.close(promise: nil)
            throw error
        }
    }

    func handle(value: Value, logger: Logger) async {
        await inner.handle(value: value, logger: logger)
    }
}

/// Sits right after the HTTP decoder and times what the client owes: the first request head within
/// the header timeout of the connection's opening, and each request's body within the body timeout
/// of its head; a late one closes the connection. Tells the gate while a request is incomplete (the
/// connection may then be evicted for a newcomer) and when it is whole. A first request asking for a
/// WebSocket upgrade on a server that makes them ends the watch: the pipeline is the WebSocket's
/// then (or the connection is closed after a refused upgrade).
final class RequestWatch: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart

    private let gate: ConnectionGate
    private let upgradable: Bool
    private var deadline: Scheduled<Void>?
    /// No head has come yet.
    private var first = true
    /// A head came and its `.end` has not.
    private var reading = false
    /// What the gate was last told: the connection waits for a request's bytes (true from its acceptance).
    private var toldWaiting = true

    init(gate: ConnectionGate, upgradable: Bool) {
        self.gate = gate
        self.upgradable = upgradable
    }

    func handlerAdded(context: ChannelHandlerContext) {
        schedule(context, gate.limits.headerTimeout, .headerTimeout)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        cancel()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case let .head(head):
            if first {
                first = false
                cancel()
                if upgradable, head.headers.contains(name: "upgrade") {
                    tell(context, waiting: false)
                    context.fireChannelRead(data)
                    context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
                    return
                }
            }
            reading = true
        case .body:
            break
        case .end:
            reading = false
            cancel()
            tell(context, waiting: false)
        }
        context.fireChannelRead(data)
    }

    /// A read that left a body incomplete starts its clock (once per request) and makes the
    /// connection evictable; a request read whole in one go costs neither.
    func channelReadComplete(context: ChannelHandlerContext) {
        if reading, deadline == nil {
            schedule(context, gate.limits.bodyTimeout, .bodyTimeout)
            tell(context, waiting: true)
        }
        context.fireChannelReadComplete()
    }

    private func schedule(_ context: ChannelHandlerContext, _ seconds: Double, _ reason: ConnectionGate.Closing) {
        let channel = context.channel, gate = gate
        deadline = context.eventLoop.scheduleTask(in: .nanoseconds(Int64(seconds * 1e9))) {
            gate.timedOut(channel, reason)
        }
    }

    private func cancel() {
        deadline?.cancel()
        deadline = nil
    }

    private func tell(_ context: ChannelHandlerContext, waiting: Bool) {
        guard toldWaiting != waiting else { return }
        toldWaiting = waiting
        gate.waiting(context.channel, waiting)
    }
}

extension HTTPServerBuilder {
    /// Hummingbird's HTTP/1 server with `limits`: the idle timeout on its own handler, the cap and
    /// the header and body timeouts by a ``ConnectionGate`` named `server`.
    static func http1(server: String, limits: ConnectionLimits, logger: Logger) -> HTTPServerBuilder {
        let gate = ConnectionGate(server: server, limits: limits, logger: logger)
        return HTTPServerBuilder { responder in
            GuardedChannel(
                inner: HTTP1Channel(responder: responder, configuration: .init(idleTimeout: limits.idleTimeoutAmount)),
                gate: gate)
        }
    }
}

extension ConnectionLimits {
    /// ``idleTimeout`` as NIO takes it.
    var idleTimeoutAmount: TimeAmount { .nanoseconds(Int64(idleTimeout * 1e9)) }
}
