import TrellisApplication
import ArgumentParser
import Foundation
import Logging
import TrellisCore
import TrellisStore

/// `trellis bridge`: the bridges to upstream brokers (docs/bridge.md).
struct BridgeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bridge",
        abstract: "Show the bridges to upstream brokers and what waits in their queues.",
        subcommands: [Status.self])

    /// `trellis bridge status`: each configured bridge, its rules, and its queue in the state.
    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print each bridge of the configuration, its rules, and what waits in its queue.",
            discussion: """
                Reads the bridges from the configuration `trellis run` reads (the file's bridges: section) and \
                their queues from the state store directly (SQLite, also while a relay runs on it; or \
                PostgreSQL), found as `trellis run` finds it. For each bridge: the upstream broker, the \
                queue's bounds, the messages and payload bytes waiting for the upstream broker and when the \
                oldest was kept, then each rule with its topics on both sides. --json prints one JSON object \
                per bridge instead. Exits 0; 1 when the configuration names no bridge, or the state cannot be \
                read or there is none yet (reading it never makes one).
                """)

        @Flag(name: .long, help: "One JSON object per bridge.")
        var json = false

        @OptionGroup var location: StateStoreLocation

        func run() async throws {
            let (place, configuration) = try await location.resolve()
            guard !configuration.bridges.isEmpty else {
                throw fail(
                    "the configuration names no bridge (\(configuration.file ?? "no file")): add a bridges: section, see docs/bridge.md"
                )
            }
            var logger = Logger(label: "trellis.bridge")
            logger.logLevel = .warning
            let queues: [(messages: Int, bytes: Int, oldest: Date?)]
            do {
                queues = try await place.withStore(.read, owner: "trellis-bridge-status", logger: logger) { store in
                    var queues: [(Int, Int, Date?)] = []
                    for bridge in configuration.bridges {
                        let backlog = try await store.forwardBacklog(bridge: bridge.name)
                        queues.append(
                            (backlog.messages, backlog.bytes, try await store.oldestForward(bridge: bridge.name)))
                    }
                    return queues
                }
            } catch let error as StateAccessError {
                throw fail("\(error)")
            } catch {
                throw fail("cannot read the bridges' queues: \(error)")
            }
            let now = Date()
            for (bridge, queue) in zip(configuration.bridges, queues) {
                let upstream = "\(bridge.url)"
                if json {
                    var object: [String: Any] = [
                        "bridge": bridge.name, "upstream": upstream, "queued": queue.messages,
                        "queued_bytes": queue.bytes, "max_bytes": bridge.maxBytes, "max_age": Int(bridge.maxAge),
                        "out": bridge.outRules.map(\.summary), "in": bridge.inRules.map(\.summary)
                    ]
                    if let oldest = queue.oldest { object["oldest_kept_at"] = ISO8601Time.format(oldest) }
                    let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
                    print(String(decoding: data, as: UTF8.self))
                    continue
                }
                print(
                    "bridge \(bridge.name) → \(upstream) (window \(bridge.window), max_bytes \(bridge.maxBytes), max_age \(Int(bridge.maxAge)) s)"
                )
                let oldest = queue.oldest.map {
                    ", the oldest kept \(ISO8601Time.format($0)) (\(Int(now.timeIntervalSince($0))) s ago)"
                }
                print("  queued: \(queue.messages) messages, \(queue.bytes) bytes\(oldest ?? "")")
                for (index, rule) in bridge.outRules.enumerated() { print("  out[\(index)]: \(rule.summary)") }
                for (index, rule) in bridge.inRules.enumerated() { print("  in[\(index)]: \(rule.summary)") }
            }
        }
    }
}
