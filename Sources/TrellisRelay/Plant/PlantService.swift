import Foundation
import Synchronization
import TrellisCore
import TrellisMQTT
import TrellisStore

/// The plant tracker host: answers text requests on `rpi/torpi` (replies on `rpi/fromrpi`) and
/// on the per-client `rpi/torpi/<client>` (replies on `rpi/fromrpi/<client>`), and stores the
/// readings sensor nodes publish on `rpi/sensors/<sensor>`.
public final class PlantService: Sendable {
    let settings: RelaySettings
    let spam: Mutex<SpamGuard>
    /// The last `RES_plantSensorData` payload rendered and the records it was rendered from: the
    /// records change only with a reading, so a burst of requests renders them once.
    let lastSensorData = Mutex<(records: [SensorRecord], payload: EncodedPlantPayload)?>(nil)

    public init(settings: RelaySettings) {
        self.settings = settings
        self.spam = Mutex(SpamGuard(limit: settings.spamLimit, window: settings.spamWindow))
    }

    /// The request topic shared by every client.
    public var requestTopic: String { "\(settings.plantPrefix)/torpi" }
    /// The reply topic shared by every client.
    public var replyTopic: String { "\(settings.plantPrefix)/fromrpi" }

    /// This service's entries of the routing table.
    public var routes: [Route] {
        [
            Route(requestTopic, service: "plant", handler: ClosureHandler { [self] message, context in
                await handleRequest(message, client: nil, context: context)
            }),
            Route("\(requestTopic)/+", service: "plant", handler: ClosureHandler { [self] message, context in
                await handleRequest(message, client: context.captures[0], context: context)
            }),
            Route("\(settings.plantPrefix)/sensors/+", service: "plant", handler: ClosureHandler { [self] message, context in
                await handleReading(message, sensor: context.captures[0], context: context)
            }),
        ]
    }

    /// Validates and answers one request. `client` is the topic's client level on the per-client form.
    func handleRequest(_ message: MQTTMessage, client: String?, context: HandlerContext) async -> HandlerOutput {
        let now = context.now
        if message.retain {
            return .reject(message, reason: "retained_request", at: now)
        }
        let parsed = PlantProtocol.parse(message.payload, hostName: settings.hostName)
        var output = HandlerOutput()
        let reply = ReplyRoute(service: self, request: message, client: client)

        if let client, let sender = parsed.claimedSender, sender != client {
            return .reject(message, reason: "sender_mismatch", at: now)
        }
        if let sender = parsed.accountableSender {
            switch spam.withLock({ $0.admit(sender: client ?? sender, at: now) }) {
            case .allowed:
                break
            case .kicked:
                output.deadLetters.append(DeadLetter(reason: PlantErrorTag.kickedForSpam.rawValue, topic: message.topic,
                                                     payload: message.payload, receivedAt: now))
                if let answer = parsed.kickMessage(hostName: settings.hostName) {
                    output.publishes += reply.messages(for: answer)
                }
                return output
            case .muted:
                return .reject(message, reason: "spam_muted", at: now)
            }
        }

        switch parsed {
        case .ownMessage:
            return .none
        case let .incomingError(error):
            context.logger.info("error tag received; not answered",
                                metadata: ["operation": "\(error.operation)", "sender": "\(error.sender)"])
            return .none
        case let .rejected(rejection):
            output.deadLetters.append(DeadLetter(reason: rejection.tag?.rawValue ?? rejection.reason, topic: message.topic,
                                                 payload: message.payload, receivedAt: now))
            if let answer = PlantProtocol.error(for: rejection, hostName: settings.hostName) {
                output.publishes += reply.messages(for: answer)
            }
            return output
        case let .request(request, operation):
            let changesPlants = operation == .addNewPlant || operation == .deletePlant
            let plantsBefore = changesPlants && settings.homeAssistantEnabled ? try? await context.store.plants() : nil
            let answer = await perform(operation, for: request, store: context.store)
            switch answer {
            case let .reply(payload):
                output.publishes += reply.messages(PlantProtocol.replyBytes(to: request, operation: operation, payload: payload,
                                                                            hostName: settings.hostName))
                if let plantsBefore {
                    output.publishes += await plantStateChanges(since: plantsBefore, context: context)
                }
            case let .error(tag):
                output.deadLetters.append(DeadLetter(reason: tag.rawValue, topic: message.topic, payload: message.payload,
                                                     receivedAt: now))
                output.publishes += reply.messages(for: PlantProtocol.error(tag, for: request, hostName: settings.hostName))
            case let .failed(error):
                context.logger.error("state store failed while answering \(operation.rawValue): \(error)")
                output.deadLetters.append(DeadLetter(reason: "store_error", topic: message.topic, payload: message.payload,
                                                     receivedAt: now))
            }
            return output
        }
    }

    /// Stores one sensor reading, or dead-letters it with the reason it is unusable. A retained
    /// reading (delivered when Trellis subscribes) is used only when it says when it was taken.
    func handleReading(_ message: MQTTMessage, sensor rawSensor: String, context: HandlerContext) async -> HandlerOutput {
        guard let sensor = SensorAddress.normalize(rawSensor) else {
            return .reject(message, reason: "invalid_sensor_address", at: context.now)
        }
        switch SensorReport.decode(message.payload) {
        case let .failure(rejection):
            return .reject(message, reason: rejection.reason, at: context.now)
        case let .success(report):
            // A retained reading is handed over again on every (re)subscription. Without its own
            // time it would be stamped "now" each time, so a stale reading would look fresh.
            if message.retain && report.at == nil {
                return .reject(message, reason: "retained_reading_without_at", at: context.now)
            }
            do {
                try await context.store.recordReading(sensor: sensor, moisture: report.moisture,
                                                      temperature: report.temperature, at: report.at ?? context.now)
                return HandlerOutput(publishes: try await plantStates(withSensor: sensor, context: context))
            } catch {
                context.logger.error("could not store a reading of \(sensor): \(error)")
                return .reject(message, reason: "store_error", at: context.now)
            }
        }
    }
}
