import TrellisCore
import TrellisMQTT
import TrellisStore

/// The outcome of one plant operation.
enum PlantAnswer {
    case reply(EncodedPlantPayload)
    case error(PlantErrorTag)
    case failed(any Error)
}

extension PlantService {
    /// Carries out a valid request against the store.
    func perform(_ operation: PlantOperation, for request: PlantMessage, store: any TrellisStore) async -> PlantAnswer {
        do {
            switch operation {
            case .plantInfoOnStartup:
                let plants = try await store.plants()
                let query = PlantSensorQuery(payload: request.payload)
                let chosen: [StoredPlant]
                switch query {
                case .all: chosen = plants
                case let .plant(name):
                    chosen = plants.filter { $0.name == name }
                    if chosen.isEmpty { return .error(.noPlantDataToRequest) }
                }
                return .reply(EncodedPlantPayload(PlantPayloads.plantInfo(chosen.map { PlantSummary(name: $0.name, sensors: $0.sensors) })))

            case .plantSensorData:
                let name: String? = switch PlantSensorQuery(payload: request.payload) {
                case .all: nil
                case let .plant(name): name
                }
                guard let records = try await store.sensorRecords(plant: name), !records.isEmpty else {
                    return .error(.noPlantDataToRequest)
                }
                return .reply(sensorData(records))

            case .numPlants:
                return .reply(EncodedPlantPayload(PlantPayloads.numPlants(try await store.plants().count)))

            case .addNewPlant:
                switch NewPlantRequest.parse(request.payload, maximumNameLength: settings.maxPlantNameLength) {
                case let .failure(tag):
                    return .error(tag)
                case let .success(plant):
                    switch try await store.addPlant(name: plant.name, sensors: plant.sensors, maxPlants: settings.maxPlants) {
                    case .added: return .reply(EncodedPlantPayload(plant.name))
                    case .nameTaken: return .error(.plantNameTaken)
                    case .tooManyPlants: return .error(.tooManyPlants)
                    }
                }

            case .deletePlant:
                switch PlantName.validate(request.payload, maximumLength: .max) {
                case .failure:
                    return .error(.cannotDeletePlant)
                case let .success(name):
                    return try await store.deletePlant(name: name) ? .reply(EncodedPlantPayload(name)) : .error(.cannotDeletePlant)
                }
            }
        } catch {
            return .failed(error)
        }
    }
}

/// Where a reply goes: the shared or per-client reply topic, and also the request's v5
/// Response Topic with its Correlation Data when it has one.
struct ReplyRoute {
    let service: PlantService
    let request: MQTTMessage
    let client: String?

    func messages(for answer: PlantMessage) -> [MQTTMessage] {
        messages(answer.encodedBytes())
    }

    /// The reply messages carrying `payload`, a plant message already in its wire form.
    func messages(_ payload: [UInt8]) -> [MQTTMessage] {
        let qos = min(request.qos, .atLeastOnce)
        let topic = client.map { "\(service.replyTopic)/\($0)" } ?? service.replyTopic
        guard let responseTopic = request.properties.responseTopic,
              service.settings.allowsResponseTopic(responseTopic, client: client, ownReplyTopic: topic)
        else {
            return [MQTTMessage(topic: topic, payload: payload, qos: qos)]
        }
        let correlated = MQTTProperties(correlationData: request.properties.correlationData)
        if responseTopic == topic {
            // One message, but it must still carry the Correlation Data the requester matches on.
            return [MQTTMessage(topic: topic, payload: payload, qos: qos, properties: correlated)]
        }
        return [MQTTMessage(topic: topic, payload: payload, qos: qos),
                MQTTMessage(topic: responseTopic, payload: payload, qos: qos, properties: correlated)]
    }
}

extension PlantParseResult {
    /// The sender the message claims, whether or not it is well formed.
    var claimedSender: String? {
        switch self {
        case let .request(message, _), let .incomingError(message): message.sender
        case let .rejected(rejection): rejection.sender
        case .ownMessage: nil
        }
    }

    /// The `ERR_kickedForSpam` answer to this message, when its sender can be answered.
    func kickMessage(hostName: String) -> PlantMessage? {
        switch self {
        case let .request(message, _):
            PlantProtocol.error(.kickedForSpam, for: message, hostName: hostName)
        case let .rejected(rejection):
            PlantProtocol.error(.kickedForSpam, for: rejection, hostName: hostName)
        case .incomingError, .ownMessage:
            nil
        }
    }
}

extension PlantService {
    /// The `RES_plantSensorData` payload of `records`, rendered and encoded again only when they changed.
    func sensorData(_ records: [SensorRecord]) -> EncodedPlantPayload {
        if let last = lastSensorData.withLock({ $0 }), last.records == records { return last.payload }
        let payload = EncodedPlantPayload(PlantPayloads.sensorData(records.map {
            PlantSensorRecord(plant: $0.plant, sensor: $0.sensor, moisture: $0.moisture,
                              temperature: $0.temperature, at: $0.at)
        }))
        lastSensorData.withLock { $0 = (records, payload) }
        return payload
    }
}
