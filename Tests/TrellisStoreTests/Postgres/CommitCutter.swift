import NIOCore
import NIOPosix
import Synchronization
import TrellisStorePostgres
import TrellisTestSupport

/// A TCP relay on 127.0.0.1 between a store and the real PostgreSQL server, which cuts connections at their
/// COMMIT: the fault of a server killed or a network cut just as a transaction commits, placed where no outage
/// can be placed on purpose, many times in one test.
///
/// Each COMMIT a store sends through it (postgres-nio sends the statement's text, so its bytes show) is, drawn
/// at random from a seed while cutting is on:
/// - passed on;
/// - **delivered**: passed on to the server, which commits, and the store's connection closed before the
///   answer comes back;
/// - **lost**: dropped, and both sides closed; the server sees the end of the connection inside the
///   transaction and rolls it back.
///
/// Either way the store sees one thing, its connection closed during a COMMIT, and cannot tell which.
///
/// The store's questions about such a COMMIT (`pg_xact_status`) are cut too, at their own rate (the connection closed
/// before the question reaches the server), so that some stay unanswered through every attempt of one call and are
/// asked again at the work's next try.
final class CommitCutter: Sendable {
    enum Cut {
        case delivered
        case lost
    }

    struct Counts: Sendable {
        var passed = 0
        var delivered = 0
        var lost = 0
        /// Questions about a COMMIT's outcome cut before they reached the server.
        var questionsCut = 0
    }

    /// The port to connect to instead of the server's.
    let port: Int
    private let listener: Channel
    private let decisions: Decisions

    /// Listens on 127.0.0.1 and relays every connection to `host`:`target`, cutting none until ``cut(rate:)``.
    init(to host: String, port target: Int, seed: UInt64) async throws {
        let decisions = Decisions(seed: seed)
        self.decisions = decisions
        listener = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { inbound in
                // The server's side on the store's side's event loop: a cut handles both in one go.
                ClientBootstrap(group: inbound.eventLoop).connect(host: host, port: target)
                    .flatMap { outbound in
                        inbound.pipeline.addHandler(Forward(to: outbound, decisions: decisions)).flatMap {
                            outbound.pipeline.addHandler(Forward(to: inbound, decisions: nil))
                        }
                    }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        port = listener.localAddress?.port ?? 0
    }

    /// From now on, each COMMIT is cut with probability `rate`, and each question about one with probability
    /// `questions` (0 and 0 stop cutting).
    func cut(rate: Double, questions: Double = 0) {
        decisions.state.withLock {
            $0.rate = rate
            $0.questions = questions
        }
    }

    /// How many COMMITs went each way so far.
    var counts: Counts { decisions.state.withLock { $0.counts } }

    /// Stops listening; relayed connections close when either side does.
    func close() async throws {
        try await listener.close()
    }

    /// The seeded draws, shared by the listener's handlers.
    fileprivate final class Decisions: Sendable {
        let state: Mutex<(random: SplitMix, rate: Double, questions: Double, counts: Counts)>

        init(seed: UInt64) {
            state = Mutex((SplitMix(state: seed), 0, 0, Counts()))
        }

        /// Whether to cut the question about a COMMIT's outcome just read.
        func cutsQuestion() -> Bool {
            state.withLock { state in
                guard Double(state.random.next() >> 11) / Double(UInt64(1) << 53) < state.questions else {
                    return false
                }
                state.counts.questionsCut += 1
                return true
            }
        }

        /// What to do with the COMMIT just read: nil to pass it on.
        func next() -> Cut? {
            state.withLock { state in
                let draw = Double(state.random.next() >> 11) / Double(UInt64(1) << 53)
                guard draw < state.rate else {
                    state.counts.passed += 1
                    return nil
                }
                if state.random.next() & 1 == 0 {
                    state.counts.delivered += 1
                    return .delivered
                }
                state.counts.lost += 1
                return .lost
            }
        }
    }
}

/// Copies what one side reads to the other; on the store's side, cuts at a COMMIT as the cutter says.
private final class Forward: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private let partner: Channel
    private let decisions: CommitCutter.Decisions?
    /// Set once this side was cut: its end leaves the server's side to close on its own.
    private var cut = false

    init(to partner: Channel, decisions: CommitCutter.Decisions?) {
        self.partner = partner
        self.decisions = decisions
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let bytes = unwrapInboundIn(data)
        if let decisions, Self.holds(Self.question, in: bytes), decisions.cutsQuestion() {
            cut = true
            partner.close(mode: .output, promise: nil)
            context.close(promise: nil)
            return
        }
        if let decisions, Self.holds(Self.commit, in: bytes), let decision = decisions.next() {
            cut = true
            let server = partner
            switch decision {
            case .delivered:
                // The server reads the COMMIT, then the end of its input; it commits and answers into nothing.
                server.writeAndFlush(bytes).whenComplete { _ in server.close(mode: .output, promise: nil) }
            case .lost:
                server.close(mode: .output, promise: nil)
            }
            context.close(promise: nil)
            return
        }
        partner.writeAndFlush(bytes, promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        if !cut { partner.close(promise: nil) }
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    /// A statement whose text is `COMMIT` (the Parse message's query, NUL-ended).
    private static let commit = Array("COMMIT\0".utf8)
    /// The store's question about a COMMIT's outcome.
    private static let question = Array("pg_xact_status(".utf8)

    /// Whether `bytes` hold `needle`.
    private static func holds(_ needle: [UInt8], in bytes: ByteBuffer) -> Bool {
        let view = bytes.readableBytesView
        guard view.count >= needle.count else { return false }
        var index = view.startIndex
        while index <= view.endIndex - needle.count {
            if view[index..<index + needle.count].elementsEqual(needle) { return true }
            index += 1
        }
        return false
    }
}
