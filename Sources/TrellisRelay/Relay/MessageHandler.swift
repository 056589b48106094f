import Foundation
import Logging
import TrellisCore
import TrellisMQTTTypes
import TrellisStore

/// What a handler sees besides the message: the wildcard levels of its route, the time of
/// receipt (the capture's clock when replaying), the store and the settings.
///
/// The store, settings and logger are read through the engine that handles the message, so
/// making a context per message copies one reference, not every setting.
public struct HandlerContext: Sendable {
    /// The topic levels the route's `+` wildcards matched, in order.
    public var captures: [String]
    /// When the message was received.
    public var now: Date
    private let engine: RelayEngine

    init(captures: [String], now: Date, engine: RelayEngine) {
        self.captures = captures
        self.now = now
        self.engine = engine
    }

    /// All state.
    public var store: any TrellisStore { engine.store }
    /// The relay's settings.
    public var settings: RelaySettings { engine.settings }
    public var logger: Logger { engine.logger }
    /// The Home Assistant discovery configs published so far.
    public var discovery: DiscoveryLedger { engine.discovery }
    /// The backup being written and the last one asked for.
    public var backups: BackupLedger { engine.backups }
    /// The per-client rates and the refusals of every limit.
    public var limits: ClientLimits { engine.limits }
    /// The recent traffic (``TrafficWatch``), for `trellis/request/trace`.
    public var watch: TrafficWatch { engine.watch }
}

/// What a handler asks the relay to do: messages to publish and messages to reject.
public struct HandlerOutput: Sendable {
    public var publishes: [MQTTMessage] = []
    public var deadLetters: [DeadLetter] = []
    /// Publish the whole Home Assistant announcement (every config and each plant's state).
    /// Asked for rather than returned: with thousands of things it is tens of thousands of
    /// messages, which the live relay publishes from a task of its own at the broker's pace and
    /// offline replay appends to the message's output (``RelayEngine/process(_:at:)``).
    public var announcesDiscovery = false

    public init(publishes: [MQTTMessage] = [], deadLetters: [DeadLetter] = [], announcesDiscovery: Bool = false) {
        self.publishes = publishes
        self.deadLetters = deadLetters
        self.announcesDiscovery = announcesDiscovery
    }

    /// Nothing to do.
    public static let none = HandlerOutput()

    /// A single rejection of `message` for `reason`.
    public static func reject(_ message: MQTTMessage, reason: String, at time: Date) -> HandlerOutput {
        HandlerOutput(deadLetters: [
            DeadLetter(reason: reason, topic: message.topic, payload: message.payload, receivedAt: time)
        ])
    }

    public mutating func publish(_ message: MQTTMessage) { publishes.append(message) }

    /// Adds `messages` to publish: taken as they are while there is nothing yet, where appending
    /// would copy them into a new buffer.
    public mutating func publish(contentsOf messages: [MQTTMessage]) {
        if publishes.isEmpty {
            publishes = messages
        } else {
            publishes += messages
        }
    }
    public mutating func merge(_ other: HandlerOutput) {
        if publishes.isEmpty && deadLetters.isEmpty && !announcesDiscovery {
            self = other
            return
        }
        publish(contentsOf: other.publishes)
        deadLetters += other.deadLetters
        announcesDiscovery = announcesDiscovery || other.announcesDiscovery
    }
}

/// A service's logic for one route. Handlers never touch the network: they return what should
/// be published, so the same code runs live and in offline replay.
public protocol MessageHandler: Sendable {
    func handle(_ message: MQTTMessage, context: HandlerContext) async -> HandlerOutput
}

/// A handler made from a closure.
///
/// Write the closure without a capture list (`{ message, context in await self.handle(…) }`): with
/// one, Swift 6.3 infers the closure `@concurrent` even in a module where async functions run on their
/// caller's executor, and each message then pays a conversion thunk, an async frame and a hop to the
/// executor it was already on.
public struct ClosureHandler: MessageHandler {
    let body: @Sendable (MQTTMessage, HandlerContext) async -> HandlerOutput

    public init(_ body: @escaping @Sendable (MQTTMessage, HandlerContext) async -> HandlerOutput) {
        self.body = body
    }

    public func handle(_ message: MQTTMessage, context: HandlerContext) async -> HandlerOutput {
        await body(message, context)
    }
}
