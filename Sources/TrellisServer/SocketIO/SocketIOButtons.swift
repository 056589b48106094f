import Foundation
import Logging
import TrellisCore
import TrellisRelay
import TrellisSocketIO

/// The P2O flow over Socket.IO: each session is a client of the relay's button service (through
/// ``LocalButtonClients``), named `socketio-<sid>`, and the service's answers become events.
///
/// - joining the namespace marks the client online: the service answers `connection-response`;
/// - `register` with a button id: `register-response`, with the button when it exists;
/// - `unregister` with a button id: `unregister-response`;
/// - `press` (or `button-press`) with a button id and, optionally, an ISO 8601 time: a press, fanned
///   out like one from MQTT, when the press policy allows the session's token; otherwise refused
///   with `press-response` `{"status":"failed","error":…}`, counted, and not applied;
/// - every press of a registered button, from MQTT or Socket.IO: `button-press` with the id.
///
/// A Socket.IO client carries no identity across connections, so each connection is a new client:
/// its first registration misses nothing (`count` 0) and it is forgotten when it leaves.
struct SocketIOButtons: Sendable {
    let relay: RelayService
    let presses: SocketIOPressPolicy
    let metrics: SocketIOMetrics
    let logger: Logger

    func handle(_ input: EngineIOSession.Input, on connection: SocketIOConnection) async {
        let client = connection.clientID
        let clients = relay.localClients
        switch input {
        case .connected:
            await clients.attach(
                client: client,
                sink: { [weak connection, logger] event, payload in
                    guard let connection else { return }
                    // `button-press` carries the bare id; the other answers are JSON already.
                    let argument =
                        event == "button-press"
                        ? JSONText.string(String(decoding: payload, as: UTF8.self))
                        : String(decoding: payload, as: UTF8.self)
                    let queued = connection.update { $0.emit(event, argumentsJSON: [argument]) }
                    if queued {
                        logger.debug("Socket.IO event queued", metadata: ["client": "\(client)", "event": "\(event)"])
                    } else {
                        logger.debug(
                            "Socket.IO event dropped: the session is closed or has left the namespace",
                            metadata: [
                                "client": "\(client)", "event": "\(event)",
                                "closed": "\(connection.closeReason?.rawValue ?? "no")"
                            ])
                    }
                }, relay: relay)
        case .disconnected:
            await clients.detach(client: client, forget: true, relay: relay)
        case let .event(name, arguments):
            await event(name, arguments, client: client, connection: connection)
        case .malformed:
            break
        }
    }

    private func event(_ name: String, _ arguments: [JSONValue], client: String, connection: SocketIOConnection) async {
        let clients = relay.localClients
        switch name {
        case "register", "unregister":
            guard let id = Self.identifier(arguments.first) else {
                let reply = ButtonPayloads.failure("\(name) takes the button id, a string")
                connection.update {
                    _ = $0.emit("\(name)-response", argumentsJSON: [String(decoding: reply, as: UTF8.self)])
                }
                return
            }
            if name == "register" {
                await clients.register(client: client, button: Array(id.utf8), relay: relay)
            } else {
                await clients.unregister(client: client, button: Array(id.utf8), relay: relay)
            }
        case "press", "button-press":
            let decision = presses.decide(
                SocketIOPressPolicy.presentedToken(
                    auth: connection.connectAuth, header: connection.headerToken, query: connection.queryToken))
            guard decision == .allowed else {
                metrics.refusedPress(decision.rawValue)
                logger.debug(
                    "Socket.IO press refused", metadata: ["client": "\(client)", "reason": "\(decision.rawValue)"])
                let reply = ButtonPayloads.failure(
                    decision == .pressesOff
                        ? "presses over Socket.IO are off" : "press refused: a valid token is required")
                connection.update {
                    _ = $0.emit("press-response", argumentsJSON: [String(decoding: reply, as: UTF8.self)])
                }
                return
            }
            var time = [UInt8]()
            if arguments.count > 1, case let .string(text) = arguments[1] { time = Array(text.utf8) }
            guard let id = Self.identifier(arguments.first),
                case .success = await clients.press(button: id, time: time, relay: relay)
            else {
                logger.debug("Socket.IO press refused", metadata: ["client": "\(client)"])
                return
            }
        default:
            logger.debug("Socket.IO event ignored", metadata: ["client": "\(client)", "event": "\(name)"])
        }
    }

    /// A button id given as a string, or as a whole number (as a JavaScript client may send it).
    static func identifier(_ value: JSONValue?) -> String? {
        switch value {
        case let .string(text): text
        case let .integer(number) where number.magnitude < 1_000_000_000_000_000: String(number)
        case let .number(number) where number.rounded() == number && abs(number) < 1e15: String(Int64(number))
        default: nil
        }
    }
}
