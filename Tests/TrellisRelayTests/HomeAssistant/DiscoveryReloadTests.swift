import Foundation
import Synchronization
import Testing
import TrellisMQTT
import TrellisRelay
import TrellisTestSupport

/// Discovery on a running relay: what it publishes at start, and what a configuration reload
/// that turns it off or moves it does to the retained configs on the broker.
@Suite("Home Assistant discovery on a live relay")
struct DiscoveryReloadTests {
    /// The configs live under each prefix (a topic whose latest message is a non-empty config),
    /// kept up to date from the messages not read before. A collector's wait asks again at every
    /// message; counting over every message each time made a wait for thousands of configs cost
    /// the square of their number, which on a loaded machine outlasted the wait.
    final class LiveConfigs: Sendable {
        private struct State {
            var read = 0
            var latest: [String: Bool] = [:]
            var live: [Substring: Int] = [:]
        }

        private let state = Mutex(State())

        /// How many configs are live under `prefix` (one topic level) in `messages`, a later state of
        /// the messages given before.
        func count(_ messages: [MQTTMessage], under prefix: String) -> Int {
            state.withLock { state in
                // A collector's messages only grow: those past `read` are the new ones.
                for message in messages.dropFirst(state.read) where message.topic.hasSuffix("/config") {
                    let isLive = !message.payload.isEmpty
                    let wasLive = state.latest.updateValue(isLive, forKey: message.topic) ?? false
                    if isLive != wasLive {
                        state.live[message.topic.prefix { $0 != "/" }, default: 0] += isLive ? 1 : -1
                    }
                }
                state.read = max(state.read, messages.count)
                return state.live[Substring(prefix)] ?? 0
            }
        }
    }

    /// Presses `count` buttons once each and waits until Trellis's 3 configs and the 2 of every
    /// button are live under `homeassistant/`; returns how many configs that is.
    static func press(_ count: Int, from watcher: MQTTClient, until inbox: MessageCollector, configs: LiveConfigs)
        async throws -> Int
    {
        for index in 0..<count {
            try watcher.publish(topic: "p2o/buttons/b\(index)/press", payload: [], qos: .atLeastOnce)
        }
        let all = 3 + 2 * count
        // Generous: the full suite runs CPU-bound benchmarks beside it on two cores.
        try await inbox.wait(timeout: .seconds(120), "every button's configs") { messages in
            configs.count(messages, under: "homeassistant") == all
        }
        return all
    }

    @Test("configs at start and with a thing's first press; a new prefix moves them; off clears them")
    func reload() async throws {
        try await withRelay { relay in
            let (watcher, inbox) = try await relay.connectCollecting("homeassistant/#", "ha2/#")
            let configs = LiveConfigs()
            try await inbox.wait(timeout: .seconds(30), "Trellis's own configs, retained") { messages in
                configs.count(messages, under: "homeassistant") == 3
            }
            try await watcher.publishAndWait(topic: "p2o/buttons/hall/press", payload: [])
            try await inbox.wait(timeout: .seconds(30), "the button's configs") { messages in
                configs.count(messages, under: "homeassistant") == 5
            }

            var settings = relay.settings
            settings.discoveryPrefix = "ha2"
            let service = try #require(relay.service)
            try await service.apply(settings)
            try await inbox.wait(timeout: .seconds(30), "every config moved from homeassistant/ to ha2/") { messages in
                configs.count(messages, under: "homeassistant") == 0 && configs.count(messages, under: "ha2") == 5
            }

            settings.homeAssistantEnabled = false
            try await service.apply(settings)
            try await inbox.wait(timeout: .seconds(30), "every config cleared") { messages in
                configs.count(messages, under: "ha2") == 0
            }
            #expect(service.engine.discovery.count == 0)
        }
    }

    /// The whole announcement is published from its own task, a few hundred messages at a time;
    /// one that a new prefix interrupts stops before the removals of what it published, so nothing
    /// is left under a prefix no longer in use.
    @Test(
        "an announcement of 600 buttons (1,203 configs) arrives whole; moved twice in a row, nothing stays under the prefixes left"
    )
    func largeAnnouncement() async throws {
        try await withRelay { relay in
            let (watcher, inbox) = try await relay.connectCollecting("homeassistant/#", "ha2/#", "ha3/#")
            let configs = LiveConfigs()
            let buttons = 600
            let all = try await Self.press(buttons, from: watcher, until: inbox, configs: configs)

            var settings = relay.settings
            let service = try #require(relay.service)
            settings.discoveryPrefix = "ha2"
            try await service.apply(settings)
            settings.discoveryPrefix = "ha3"
            try await service.apply(settings)
            try await inbox.wait(timeout: .seconds(120), "every config under ha3/ and none elsewhere") { messages in
                configs.count(messages, under: "homeassistant") == 0 && configs.count(messages, under: "ha2") == 0
                    && configs.count(messages, under: "ha3") == all
            }
        }
    }

    /// Home Assistant's birth message brings the whole announcement again. Its handler only asks for
    /// it; the relay publishes it from the paced announcer, so the message loop goes on answering.
    @Test(
        "a birth message on homeassistant/status brings all 603 configs of 300 buttons again, and the relay answers a request meanwhile"
    )
    func birthMessage() async throws {
        try await withRelay { relay in
            let (watcher, inbox) = try await relay.connectCollecting("homeassistant/#", "p2o/buttons/+/state")
            let buttons = 300
            let all = try await Self.press(buttons, from: watcher, until: inbox, configs: LiveConfigs())

            let before = await inbox.messages.count
            try await watcher.publishAndWait(topic: "homeassistant/status", payload: Array("online".utf8))
            try await watcher.publishAndWait(topic: "p2o/buttons/late/press", payload: [])
            try await inbox.wait(
                timeout: .seconds(60), "every config again after the birth message, and the late press answered"
            ) { messages in
                let since = messages.dropFirst(before)
                let configs = Set(
                    since.filter {
                        $0.topic.hasPrefix("homeassistant/") && $0.topic.hasSuffix("/config") && !$0.payload.isEmpty
                    }
                    .map(\.topic))
                return configs.count >= all && since.contains { $0.topic == "p2o/buttons/late/state" }
            }
            let since = await inbox.messages.dropFirst(before)
            #expect(
                !since.contains {
                    $0.topic.hasPrefix("homeassistant/") && $0.topic.hasSuffix("/config") && $0.payload.isEmpty
                },
                "a birth message removes nothing")
        }
    }
}
