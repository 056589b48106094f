import Foundation
import TrellisCore
import TrellisMQTTTypes
import TrellisStore

/// The button service: registrations, fan-out of presses, counts and histories, over the topics
/// that replace the original socket.io events (`connection-response`, `register`,
/// `register-response`, `button-press`).
public struct ButtonService: Sendable {
    let settings: RelaySettings

    public init(settings: RelaySettings) {
        self.settings = settings
    }

    var buttons: String { "\(settings.buttonPrefix)/buttons" }
    var clients: String { "\(settings.buttonPrefix)/clients" }

    /// This service's entries of the routing table.
    public var routes: [Route] {
        [
            Route("\(buttons)/+/press", service: "buttons") { await press($0, button: $1, context: $2) },
            Route("\(clients)/+/status", service: "buttons") { await status($0, client: $1, context: $2) },
            Route("\(clients)/+/register", service: "buttons") { await register($0, client: $1, context: $2) },
            Route("\(clients)/+/unregister", service: "buttons") { await unregister($0, client: $1, context: $2) }
        ]
    }

    /// A press: counted, kept in the history, published as the button's retained state and
    /// fanned out to every registered client that is online.
    func press(_ message: MQTTMessage, button rawButton: String, context: HandlerContext) async -> HandlerOutput {
        if message.retain {
            return .reject(message, reason: "retained_press", at: context.now)
        }
        guard case let .success(button) = ButtonIdentifier.validate(rawButton) else {
            return .reject(message, reason: "invalid_button_id", at: context.now)
        }
        let time: Date
        switch PressPayload.parse(message.payload) {
        case let .failure(rejection): return .reject(message, reason: rejection.rawValue, at: context.now)
        case let .success(stated):
            // A press dated ahead of the clock would stay the newest in the history for ever.
            guard settings.futureTimes.admits(stated, now: context.now) else {
                return .reject(message, reason: FutureTimeLimit.reason, at: context.now)
            }
            time = stated ?? context.now
        }
        do {
            // The press and its notification (`button_pressed`, opt in) are kept in one transaction.
            let router = NotificationRouter(plan: context.settings.notifications)
            let notifies = !router.plan.rules(for: .buttonPressed).isEmpty
            let now = context.now
            let outcome = try await context.store.recordPress(
                button: button, at: time, historyLimit: settings.historyLimit
            ) { state in
                notifies
                    ? router.notifications(for: .pressed(button: button, at: time, total: state.total), at: now) : []
            }
            var output = HandlerOutput()
            let state = outcome.snapshot
            output.publish(
                MQTTMessage(
                    topic: TopicPattern.buttonState.topic(button, settings.topicPrefixes),
                    payload: ButtonPayloads.state(state),
                    qos: .atLeastOnce, retain: true))
            let id = Array(button.utf8)
            for client in outcome.onlineClients {
                output.publish(
                    MQTTMessage(topic: "\(clients)/\(client)/button-press", payload: id, qos: PublishQoS.delivered))
            }
            return output
        } catch {
            context.logger.error("could not record a press of \(button): \(error)")
            return .reject(message, reason: "store_error", at: context.now)
        }
    }

    /// A client's availability: `online` is answered on `connection-response`; `offline` makes
    /// its registrations count missed presses.
    func status(_ message: MQTTMessage, client: String, context: HandlerContext) async -> HandlerOutput {
        let reply = "\(clients)/\(client)/connection-response"
        guard let status = ClientStatus(payload: message.payload) else {
            return .reject(message, reason: "invalid_status", at: context.now)
        }
        if case let .failure(error) = ButtonIdentifier.validate(client, kind: "client id") {
            guard status == .online else { return .reject(message, reason: "invalid_client_id", at: context.now) }
            var output = HandlerOutput.reject(message, reason: "invalid_client_id", at: context.now)
            output.publish(Self.answer(reply, ButtonPayloads.failure(error.message)))
            return output
        }
        do {
            try await context.store.setClientStatus(client: client, online: status == .online, at: context.now)
        } catch {
            context.logger.error("could not store the status of \(client): \(error)")
            return .reject(message, reason: "store_error", at: context.now)
        }
        guard status == .online else { return .none }
        return HandlerOutput(publishes: [Self.answer(reply, ButtonPayloads.connectionSuccess())])
    }

    /// A registration: answered with the button's history and what the client missed.
    func register(_ message: MQTTMessage, client: String, context: HandlerContext) async -> HandlerOutput {
        let reply = "\(clients)/\(client)/register-response"
        return await withValidButton(message, client: client, reply: reply, at: context.now) { button in
            do {
                let cap = settings.maxRegistrationsPerClient
                guard
                    let registration = try await context.store.register(
                        client: client, button: button, at: context.now,
                        maximumPerClient: cap)
                else {
                    context.limits.refused(
                        .registrations, client: client, at: context.now, logger: context.logger,
                        detail: "registered for \(cap) buttons already")
                    return HandlerOutput(publishes: [
                        Self.answer(
                            reply,
                            ButtonPayloads.failure(
                                "\(client) is registered for \(cap) buttons, the most one client may be; unregister one first"
                            ))
                    ])
                }
                let success = ButtonPayloads.registerSuccess(button: registration.button, missed: registration.missed)
                return HandlerOutput(publishes: [Self.answer(reply, success)])
            } catch {
                context.logger.error("could not register \(client) for \(button): \(error)")
                return .reject(message, reason: "store_error", at: context.now)
            }
        }
    }

    /// Undoes a registration; answered on `unregister-response`.
    func unregister(_ message: MQTTMessage, client: String, context: HandlerContext) async -> HandlerOutput {
        let reply = "\(clients)/\(client)/unregister-response"
        return await withValidButton(message, client: client, reply: reply, at: context.now) { button in
            do {
                let removed = try await context.store.unregister(client: client, button: button)
                let payload =
                    removed
                    ? ButtonPayloads.unregisterSuccess()
                    : ButtonPayloads.failure("\(client) is not registered for button \(button)")
                return HandlerOutput(publishes: [Self.answer(reply, payload)])
            } catch {
                context.logger.error("could not unregister \(client) from \(button): \(error)")
                return .reject(message, reason: "store_error", at: context.now)
            }
        }
    }

    /// An answer to a client: `payload` on its `reply` topic, once (``PublishQoS``).
    private static func answer(_ reply: String, _ payload: [UInt8]) -> MQTTMessage {
        MQTTMessage(topic: reply, payload: payload, qos: PublishQoS.delivered)
    }

    /// A register or unregister request: `handle` is given its button once the client id and the
    /// button id are valid; a refused request is dead-lettered, and answered on `reply` with why.
    private func withValidButton(
        _ message: MQTTMessage, client: String, reply: String, at now: Date,
        _ handle: (_ button: String) async -> HandlerOutput
    ) async -> HandlerOutput {
        switch validated(message, client: client) {
        case let .success(button):
            return await handle(button)
        case let .failure(error):
            var output = HandlerOutput.reject(message, reason: "invalid_registration", at: now)
            output.publish(Self.answer(reply, ButtonPayloads.failure(error.message)))
            return output
        }
    }

    /// The button id of a register/unregister payload, after checking the client id too.
    private func validated(_ message: MQTTMessage, client: String) -> Result<String, IdentifierError> {
        if message.retain {
            return .failure(
                IdentifierError(message: "retained registrations are ignored; publish register without the retain flag")
            )
        }
        if case let .failure(error) = ButtonIdentifier.validate(client, kind: "client id") { return .failure(error) }
        return ButtonIdentifier.validate(message.payload, kind: "button id")
    }
}
