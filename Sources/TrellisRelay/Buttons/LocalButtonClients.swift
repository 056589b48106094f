import Foundation
import Synchronization
import TrellisCore
import TrellisMQTTTypes
import TrellisStore

/// Clients of the button service that are not on MQTT, such as Socket.IO sessions.
///
/// A local client is a client of the same service with the same store: what it does is handed to
/// the relay's engine as if it had published it on its own topics (`<prefix>/clients/<id>/status`,
/// `…/register`, `<prefix>/buttons/<id>/press`), and every answer the engine publishes on a local
/// client's topics (`…/connection-response`, `…/register-response`, `…/button-press`) is handed to
/// that client instead of the broker, by the relay's message loop as well as here. Presses from
/// MQTT therefore reach local clients, and presses of local clients reach MQTT clients.
public final class LocalButtonClients: Sendable {
    /// Receives one answer: the event (the reply topic's last level) and its payload.
    public typealias Sink = @Sendable (_ event: String, _ payload: [UInt8]) -> Void

    private let sinks = Mutex<[String: Sink]>([:])
    private let count = Atomic<Int>(0)

    public init() {}

    /// Local clients attached now.
    public var attached: Int { count.load(ordering: .relaxed) }

    /// Hands `reply` to the local client it is addressed to; false when it is not addressed to
    /// one (the relay then publishes it).
    public func deliver(_ reply: MQTTMessage, buttonPrefix: String) -> Bool {
        guard count.load(ordering: .relaxed) > 0 else { return false }
        let head = buttonPrefix + "/clients/"
        guard reply.topic.hasPrefix(head) else { return false }
        let rest = reply.topic.dropFirst(head.count)
        guard let slash = rest.firstIndex(of: "/") else { return false }
        let client = String(rest[..<slash])
        let event = String(rest[rest.index(after: slash)...])
        guard !event.contains("/"), let sink = sinks.withLock({ $0[client] }) else { return false }
        sink(event, reply.payload)
        return true
    }

    /// Attaches a client and marks it online; the service answers on `connection-response`.
    public func attach(client: String, sink: @escaping Sink, relay: RelayService) async {
        let added = sinks.withLock { sinks in
            let isNew = sinks[client] == nil
            sinks[client] = sink
            return isNew
        }
        if added { count.add(1, ordering: .relaxed) }
        await submit(topic: clientTopic(client, "status", relay), payload: Array("online".utf8), relay: relay)
    }

    /// Registers the client for a button; the service answers on `register-response`.
    public func register(client: String, button: [UInt8], relay: RelayService) async {
        await submit(
            topic: clientTopic(client, "register", relay), payload: button, relay: relay, waitingOutOutages: true)
    }

    /// Removes a registration; the service answers on `unregister-response`.
    public func unregister(client: String, button: [UInt8], relay: RelayService) async {
        await submit(
            topic: clientTopic(client, "unregister", relay), payload: button, relay: relay, waitingOutOutages: true)
    }

    /// A press of `button`, at `time` (empty: now). An id that cannot be a topic level is refused
    /// before it is made into one.
    public func press(button: String, time: [UInt8] = [], relay: RelayService) async -> Result<Void, IdentifierError> {
        switch ButtonIdentifier.validate(button) {
        case let .failure(error): return .failure(error)
        case let .success(id):
            let topic = "\(relay.engine.settings.buttonPrefix)/buttons/\(id)/press"
            await submit(topic: topic, payload: time, relay: relay, waitingOutOutages: true)
            return .success(())
        }
    }

    /// Detaches a client: it is marked offline, so presses count as missed for its registrations;
    /// with `forget`, its registrations and record are removed as well (a client that carries no
    /// identity cannot come back for them).
    public func detach(client: String, forget: Bool, relay: RelayService) async {
        let removed = sinks.withLock { $0.removeValue(forKey: client) != nil }
        if removed { count.subtract(1, ordering: .relaxed) }
        await submit(topic: clientTopic(client, "status", relay), payload: Array("offline".utf8), relay: relay)
        guard forget else { return }
        do {
            try await relay.engine.store.forgetClient(id: client)
        } catch {
            relay.engine.logger.error("could not forget the client \(client): \(error)")
        }
    }

    private func clientTopic(_ client: String, _ leaf: String, _ relay: RelayService) -> String {
        "\(relay.engine.settings.buttonPrefix)/clients/\(client)/\(leaf)"
    }

    /// Runs a message through the relay's engine, as if received from the broker now, and sends
    /// the answers on: to local clients, or to the broker. A press or a registration
    /// (`waitingOutOutages`) waits out a store outage like a message from the broker
    /// (``OutageWaiting``) and is handled once the store is back, rather than refused: a Socket.IO
    /// client has no broker to send it again. A client's status does not: it is sent from the
    /// sessions' shared tick and their shutdown, which must not wait for the store.
    private func submit(topic: String, payload: [UInt8], relay: RelayService, waitingOutOutages: Bool = false) async {
        let engine = relay.engine
        let message = MQTTMessage(topic: topic, payload: payload, qos: .atLeastOnce)
        let replies = await OutageWaiting.$enabled.withValue(waitingOutOutages) {
            await engine.process(message, at: Date())
        }
        for reply in replies where !deliver(reply, buttonPrefix: engine.settings.buttonPrefix) {
            do {
                try relay.outlet.publish(reply)
            } catch {
                engine.logger.error(
                    "could not publish a reply", metadata: ["topic": "\(reply.topic)", "error": "\(error)"])
            }
        }
    }
}
