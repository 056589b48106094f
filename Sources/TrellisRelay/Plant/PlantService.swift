import Foundation
import Synchronization
import TrellisCore
import TrellisMQTTTypes
import TrellisStore

/// The plant tracker host: answers text requests on `rpi/torpi` (replies on `rpi/fromrpi`) and
/// on the per-client `rpi/torpi/<client>` (replies on `rpi/fromrpi/<client>`), and stores the
/// readings sensor nodes publish on `rpi/sensors/<sensor>`.
public final class PlantService: Sendable {
    let settings: RelaySettings
    /// The last `RES_plantSensorData` payload rendered and the records it was rendered from: the
    /// records change only with a reading, so a burst of requests renders them once.
    let lastSensorData = Mutex<(records: [PlantSensorRecord], payload: EncodedPlantPayload)?>(nil)

    /// The catalog's live side, told when a plant is renamed so its retained alerts follow the name.
    let catalog: CatalogService?
    /// Home Assistant discovery, nil while it is off: made once, as the plants' retained states
    /// it spells follow every sensor reading.
    let homeAssistant: HomeAssistantService?

    /// The request topic shared by every client.
    public let requestTopic: String
    /// The reply topic shared by every client; made once, as every answer is addressed to it.
    public let replyTopic: String

    public init(settings: RelaySettings, catalog: CatalogService? = nil) {
        self.settings = settings
        self.catalog = catalog
        homeAssistant = HomeAssistantService(settings: settings)
        requestTopic = "\(settings.plantPrefix)/torpi"
        replyTopic = "\(settings.plantPrefix)/fromrpi"
    }

    /// This service's entries of the routing table.
    public var routes: [Route] {
        [
            Route(
                requestTopic, service: "plant", onlyReads: { [self] in onlyReads($0) },
                steps: { [self] _ in PlantRequestSteps(service: self, client: nil) }),
            Route(
                "\(requestTopic)/+", service: "plant", onlyReads: { [self] in onlyReads($0) },
                steps: { [self] captures in PlantRequestSteps(service: self, client: captures[0]) }),
            Route(
                "\(settings.plantPrefix)/sensors/+", service: "plant",
                handler: ClosureHandler { message, context in
                    await self.handleReading(message, sensor: context.captures[0], context: context)
                })
        ]
    }

    /// Whether `message` is a well-formed request that only reads (``Route/onlyReads``): a plant's
    /// sensor data or a page of the startup list. Its handling changes nothing but the sender's spam
    /// count (or refresh allowance), which the store changes atomically. `REQ_numPlants` is not one:
    /// its answer grants the index reads that follow it.
    func onlyReads(_ message: MQTTMessage) -> Bool {
        guard !message.retain,
            case let .request(_, operation) = PlantProtocol.parse(message.payload, hostName: settings.hostName)
        else { return false }
        return operation == .plantSensorData || operation == .plantInfoOnStartup
    }

    /// The reply messages of `answer` in the reply topic's dialect (and, on a Response Topic, the
    /// lossless one), with the dead letter of the error it carries, if it is one.
    func rendered(
        _ answer: PlantAnswer, to request: PlantMessage, operation: PlantOperation, message: MQTTMessage,
        reply: ReplyRoute, now: Date
    ) -> HandlerOutput {
        var output = HandlerOutput()
        let (wires, error) = wires(of: answer, to: request, operation: operation, in: reply.dialect)
        if let error {
            output.deadLetters.append(
                DeadLetter(
                    reason: error.rawValue, topic: message.topic, payload: message.payload,
                    receivedAt: now))
        }
        // In the lossless dialect the wires are the lossless ones: a closure over them alone spares
        // a copy of the request and the answer, which a closure that renders again would capture.
        if reply.dialect == .lossless {
            output.publish(contentsOf: reply.messages(wires, lossless: wires))
        } else {
            output.publish(
                contentsOf: reply.messages(
                    wires, lossless: self.wires(of: answer, to: request, operation: operation, in: .lossless).wires))
        }
        return output
    }

    /// Stores one sensor reading, or dead-letters it with the reason it is unusable. A retained
    /// reading (delivered when Trellis subscribes) is used only when it says when it was taken.
    func handleReading(_ message: MQTTMessage, sensor rawSensor: String, context: HandlerContext) async -> HandlerOutput
    {
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
            // A reading dated ahead of the clock would stay the sensor's latest for ever.
            guard settings.futureTimes.admits(report.at, now: context.now) else {
                return .reject(message, reason: FutureTimeLimit.reason, at: context.now)
            }
            do {
                try await context.store.recordReading(
                    sensor: sensor, moisture: report.moisture,
                    temperature: report.temperature, at: report.at ?? context.now)
                return HandlerOutput(publishes: try await plantStates(withSensor: sensor, context: context))
            } catch {
                context.logger.error("could not store a reading of \(sensor): \(error)")
                return .reject(message, reason: "store_error", at: context.now)
            }
        }
    }
}
