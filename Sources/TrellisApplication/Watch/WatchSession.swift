import Foundation
import Synchronization
import TrellisCore
import TrellisMQTT

/// The driver of `trellis watch`: subscribes to the stream, asks the relays for it every
/// ``renewal`` seconds for ``requested`` seconds, and writes what ``WatchPrinter`` makes of each
/// message, until told to stop or `limit` lines are written.
package final class WatchSession: Sendable {
    /// How long each request keeps the stream on, and how often it is sent again.
    package static let requested = 60
    package static let renewal: Duration = .seconds(20)
    /// How long to wait for a relay's answer before saying none came.
    package static let answerWait: Duration = .seconds(5)

    let client: MQTTClient
    let printer: Mutex<WatchPrinter>
    let limit: Int?
    let written = Atomic<Int>(0)

    package init(client: MQTTClient, printer: WatchPrinter, limit: Int?) {
        self.client = client
        self.printer = Mutex(printer)
        self.limit = limit
    }

    /// Runs until `stop` yields or ends, or `limit` lines are written; a subscription the broker
    /// refuses (an account that is not an operator) is an error saying so.
    package func run<Stop: AsyncSequence & Sendable>(until stop: Stop) async throws {
        let topics = printer.withLock { $0.subscriptions }
        for topic in topics {
            do {
                try await client.subscribe(topic, qos: .atMostOnce)
            } catch {
                throw fail(
                    "cannot subscribe to \(topic) (\(error)): the watch stream is for operator accounts")
            }
        }
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                do {
                    for try await _ in stop { return }
                } catch {}
            }
            group.addTask { await self.ask() }
            group.addTask { await self.read() }
            await group.next()
            group.cancelAll()
        }
    }

    /// Sends the watch request now and every ``renewal``; says so when no relay answered the first.
    private func ask() async {
        let request = MQTTMessage(
            topic: "trellis/watch/request", payload: WatchPrinter.request(seconds: Self.requested), qos: .atMostOnce)
        var first = true
        while !Task.isCancelled {
            do {
                try client.publish(request)
            } catch {
                Self.note("could not send the watch request: \(error)")
            }
            if first {
                first = false
                try? await Task.sleep(for: Self.answerWait)
                if printer.withLock({ $0.relays.isEmpty }), !Task.isCancelled {
                    Self.note(
                        "no relay answered on trellis/watch/relays/+ within 5 s: is Trellis running on this broker, "
                            + "and is this account an operator? (still asking)")
                }
                try? await Task.sleep(for: Self.renewal - Self.answerWait)
            } else {
                try? await Task.sleep(for: Self.renewal)
            }
        }
    }

    /// Writes what each message calls for; returns when `limit` lines are written or the stream ends.
    private func read() async {
        for await message in client.messages {
            let outputs = printer.withLock { $0.take(message) }
            for output in outputs {
                switch output {
                case let .note(text):
                    Self.note(text)
                case let .line(text):
                    FileHandle.standardOutput.write(Data((text + "\n").utf8))
                    let total = written.add(1, ordering: .relaxed).newValue
                    if let limit, total >= limit { return }
                }
            }
        }
    }

    static func note(_ text: String) {
        FileHandle.standardError.write(Data("trellis watch: \(text)\n".utf8))
    }
}
