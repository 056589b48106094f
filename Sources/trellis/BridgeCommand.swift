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
                oldest was kept, then each rule with its topics on both sides and, for an out rule, what it \
                kept that waits. --json prints one JSON object \
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
            let queues: [(byRule: [String: QueuedForwards], oldest: Date?)]
            do {
                queues = try await place.withStore(.read, owner: "trellis-bridge-status", logger: logger) { store in
                    var queues: [([String: QueuedForwards], Date?)] = []
                    for bridge in configuration.bridges {
                        queues.append(
                            (
                                try await store.forwardBacklogByRule(bridge: bridge.name),
                                try await store.oldestForward(bridge: bridge.name)
                            ))
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
                let total = queue.byRule.values.reduce(QueuedForwards(), +)
                if json {
                    var object: [String: Any] = [
                        "bridge": bridge.name, "upstream": upstream, "queued": total.messages,
                        "queued_bytes": total.bytes, "max_bytes": bridge.maxBytes, "max_age": Int(bridge.maxAge),
                        "out": bridge.outRules.map(\.summary), "in": bridge.inRules.map(\.summary),
                        "queued_by_rule": queue.byRule.mapValues { ["messages": $0.messages, "bytes": $0.bytes] }
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
                print("  queued: \(total.messages) messages, \(total.bytes) bytes\(oldest ?? "")")
                for (index, rule) in bridge.outRules.enumerated() {
                    let part = queue.byRule[rule.filter.text] ?? QueuedForwards()
                    print("  out[\(index)]: \(rule.summary) (queued: \(part.messages) messages, \(part.bytes) bytes)")
                }
                // Messages kept by a rule no longer configured (or before rules were counted) still go.
                for (rule, part) in queue.byRule.sorted(by: { $0.key < $1.key })
                where !bridge.outRules.contains(where: { $0.filter.text == rule }) {
                    let name = rule.isEmpty ? "kept before rules were counted" : "kept by \(rule), no longer a rule"
                    print("  \(name): \(part.messages) messages, \(part.bytes) bytes")
                }
                for (index, rule) in bridge.inRules.enumerated() { print("  in[\(index)]: \(rule.summary)") }
            }
        }
    }
}
