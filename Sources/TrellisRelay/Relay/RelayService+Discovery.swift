import TrellisMQTTTypes

/// Publishing Home Assistant's discovery configs all at once (at every connect, when Home Assistant
/// announces itself on its birth topic, when the share group's relays change, when discovery moves
/// to another prefix), at the broker's pace.
///
/// With 10,000 buttons that is some 30,000 retained messages. Built all at once and handed to
/// libmosquitto without waiting, they were held twice (the Swift messages and the library's queued
/// copies), which made the relay's peak memory at start nearly twice its working size. Now the
/// announcement is published one thing at a time from its own task, and after every
/// ``discoveryPace`` messages it waits for the broker to acknowledge the last one: the messages
/// before it were then taken too (a connection delivers in order), so at most that many wait in
/// memory. The task is not the message loop's, which must never wait for an acknowledgement that
/// its own full read-ahead window keeps the client from reading.
extension RelayService {
    /// How many discovery messages are published between two waits for the broker.
    static let discoveryPace = 256

    /// Publishes, in the background, every Home Assistant discovery config not published yet and
    /// each plant's state. An announcement still under way is cancelled: the new one starts once
    /// it has stopped. Returns at once, so the message loop may call it.
    func announceToHomeAssistant() {
        announcement.withLock { current in
            let previous = current
            previous?.cancel()
            current = Task {
                await previous?.value
                guard !Task.isCancelled else { return }
                await self.announce()
                guard !Task.isCancelled else { return }
                await self.sweepIfDue()
            }
        }
    }

    /// Cancels the announcement under way, if any, and waits until it has stopped publishing.
    func stopAnnouncing() async {
        let running = announcement.withLock { $0 }
        running?.cancel()
        await running?.value
    }

    private func announce() async {
        let engine = self.engine
        guard let homeAssistant = engine.homeAssistant else { return }
        let outlet = self.outlet
        let logger = self.logger
        var unawaited = 0
        await homeAssistant.announce(store: engine.store, ledger: engine.discovery, logger: logger) { messages in
            for message in messages where !Task.isCancelled {
                unawaited += 1
                do {
                    if unawaited < Self.discoveryPace {
                        try outlet.publish(message)
                        continue
                    }
                    unawaited = 0
                    try await outlet.publishAndWait(message)
                } catch {
                    guard !Task.isCancelled else { return }
                    logger.error(
                        "could not publish Home Assistant discovery configs",
                        metadata: ["topic": "\(message.topic)", "error": "\(error)"])
                }
            }
        }
    }
}
