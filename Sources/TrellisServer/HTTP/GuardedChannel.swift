import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1

/// A server's child channel (Hummingbird's HTTP/1, or HTTP/1 with the WebSocket upgrade) behind a
/// ``ConnectionGate``: each accepted connection is counted in or closed at once, and its first
/// request head must be complete within the header timeout. The idle timeout is the inner
/// channel's own (`HTTP1Channel.Configuration.idleTimeout`).
struct GuardedChannel<Inner: ServerChildChannel>: ServerChildChannel {
    typealias Value = Inner.Value
    let inner: Inner
    let gate: ConnectionGate

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
                try operations.addHandler(FirstHeadWatch(gate: gate, timeout: .nanoseconds(Int64(gate.limits.headerTimeout * 1e9))), position: .after(decoder))
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

/// Sits right after the HTTP decoder until the connection's first request head is decoded: closes
/// the connection if that takes longer than `timeout` seconds, tells the gate when it came, and
/// then leaves the pipeline (so a WebSocket upgrade never meets it).
final class FirstHeadWatch: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart

    private let gate: ConnectionGate
    private let timeout: TimeAmount
    private var deadline: Scheduled<Void>?

    init(gate: ConnectionGate, timeout: TimeAmount) {
        self.gate = gate
        self.timeout = timeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let channel = context.channel, gate = gate
        deadline = context.eventLoop.scheduleTask(in: timeout) {
            gate.headerTimedOut(channel)
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head = unwrapInboundIn(data), deadline != nil {
            deadline?.cancel()
            deadline = nil
            gate.headArrived(context.channel)
            context.fireChannelRead(data)
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
            return
        }
        context.fireChannelRead(data)
    }
}

extension HTTPServerBuilder {
    /// Hummingbird's HTTP/1 server with `limits`: the idle timeout on its own handler, the cap and
    /// the header timeout by a ``ConnectionGate`` named `server`.
    static func http1(server: String, limits: ConnectionLimits, logger: Logger) -> HTTPServerBuilder {
        let gate = ConnectionGate(server: server, limits: limits, logger: logger)
        return HTTPServerBuilder { responder in
            GuardedChannel(inner: HTTP1Channel(responder: responder, configuration: .init(idleTimeout: limits.idleTimeoutAmount)),
                           gate: gate)
        }
    }
}

extension ConnectionLimits {
    /// ``idleTimeout`` as NIO takes it.
    var idleTimeoutAmount: TimeAmount { .nanoseconds(Int64(idleTimeout * 1e9)) }
}
