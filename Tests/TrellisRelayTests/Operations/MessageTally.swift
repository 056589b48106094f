import Foundation
import Testing
import TrellisMQTT
import TrellisTestSupport

/// Counts what one client receives, by a label of each message, without keeping the messages:
/// for floods of tens of thousands of answers or 64 KiB dead letters, which a ``MessageCollector``
/// would hold in memory and scan at every arrival.
actor MessageTally {
    private(set) var counts: [String: Int] = [:]
    private let waiters = StateWaiters<[String: Int]>()
    private var drain: Task<Void, Never>?

    /// Starts counting `client`'s messages under `label` (nil: not counted), then subscribes it to `filters`.
    static func counting(
        _ client: MQTTClient, subscribedTo filters: [String],
        label: @escaping @Sendable (MQTTMessage) -> String?
    ) async throws -> MessageTally {
        let tally = MessageTally()
        await tally.begin(client.messages, label: label)
        for filter in filters { try await client.subscribe(filter, qos: .atLeastOnce) }
        return tally
    }

    private func begin(_ stream: MQTTMessageStream, label: @escaping @Sendable (MQTTMessage) -> String?) {
        drain = Task { [weak self] in
            for await message in stream {
                guard let name = label(message) else { continue }
                await self?.count(name)
            }
        }
    }

    private func count(_ name: String) {
        counts[name, default: 0] += 1
        waiters.settle(counts)
    }

    /// The messages counted under `name` so far.
    func count(of name: String) -> Int { counts[name] ?? 0 }

    /// Waits until the messages counted under `names` together reach `total`; throws after `timeout`.
    func wait(for total: Int, of names: Set<String>, timeout: Duration = .seconds(60)) async throws {
        let reached: @Sendable ([String: Int]) -> Bool = { counts in
            counts.filter { names.contains($0.key) }.values.reduce(0, +) >= total
        }
        if reached(counts) { return }
        await waiters.suspend(timeout: timeout, until: reached)
        guard reached(counts) else {
            throw TimeoutError(
                message: "timed out after \(timeout) waiting for \(total) of \(names.sorted()); counted \(counts)")
        }
    }
}
