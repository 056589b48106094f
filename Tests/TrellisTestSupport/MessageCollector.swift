import TrellisMQTT

/// Drains a client's message stream and lets a test wait, with a timeout, for what it expects.
public actor MessageCollector {
    /// Everything received so far, in order.
    public private(set) var messages: [MQTTMessage] = []
    private let waiters = StateWaiters<[MQTTMessage]>()
    private var drain: Task<Void, Never>?

    public init() {}

    /// Starts collecting from `client.messages`.
    public static func collecting(_ client: MQTTClient) async -> MessageCollector {
        let collector = MessageCollector()
        await collector.begin(client.messages)
        return collector
    }

    private func begin(_ stream: MQTTMessageStream) {
        drain = Task { [weak self] in
            for await message in stream {
                await self?.append(message)
            }
        }
    }

    private func append(_ message: MQTTMessage) {
        messages.append(message)
        waiters.settle(messages)
    }

    /// Waits until `predicate` holds for the messages received so far; throws after `timeout`.
    public func wait(
        timeout: Duration = .seconds(30),
        _ description: String = "the expected messages",
        until predicate: @escaping @Sendable ([MQTTMessage]) -> Bool
    ) async throws {
        try await waiters.wait(on: { messages }, timeout: timeout, until: predicate) {
            "timed out after \(timeout) waiting for \(description); received \(messages.count) messages: \(messages.suffix(5).map { "\($0.topic)=\($0.text ?? "<\($0.payload.count) bytes>")" })"
        }
    }

    /// Waits for `count` messages on `topic` and returns them.
    @discardableResult
    public func messages(on topic: String, count: Int = 1, timeout: Duration = .seconds(30)) async throws
        -> [MQTTMessage]
    {
        try await wait(timeout: timeout, "\(count) message(s) on \(topic)") { all in
            all.filter { $0.topic == topic }.count >= count
        }
        return Array(messages.filter { $0.topic == topic }.prefix(count))
    }

    /// Messages received on `topic` so far.
    public func received(on topic: String) -> [MQTTMessage] {
        messages.filter { $0.topic == topic }
    }

    /// Every message received so far, on any topic.
    public func all() -> [MQTTMessage] { messages }

    /// Forgets everything received so far.
    public func reset() { messages.removeAll() }
}

/// A wait that ran out of time, saying what it waited for.
public struct TimeoutError: Error, CustomStringConvertible {
    public var message: String
    public var description: String { message }

    public init(message: String) {
        self.message = message
    }
}
