import TrellisCore
import TrellisMQTTTypes
import TrellisStore

/// The outcome of one plant operation, before a dialect writes it.
enum PlantAnswer: Sendable {
    case result(PlantResult)
    /// `REQ_plantSensorData`'s records as the store gave them: the lossless answer of unchanged
    /// records is rendered once and kept (``PlantService/sensorData(_:)``).
    case sensorRecords([PlantSensorRecord])
    case error(PlantErrorTag)
    case failed(any Error)
}

/// What a plant request changed, as the store's operation returned it: the follow-ups (the plant's
/// Home Assistant state, its care alerts) are computed from it.
enum PlantChange: Sendable, Equatable {
    case added(id: Int64, name: String)
    case deleted(id: Int64)
    case renamed(id: Int64, from: String, to: String)
}

extension PlantService {
    /// The one store operation that carries out `request`: every change is one operation the store
    /// makes atomic (insert-if-absent, conditional rename, delete). A rename to the same name, which
    /// the original host answered without a change, is not asked (``PlantRequestSteps``).
    func operation(for request: PlantRequest) -> StoreOperation {
        switch request {
        case .plantInfo, .numPlants: .plants
        case let .sensorData(query): .sensorRecords(plant: query.plantName)
        case let .addPlant(plant): .addPlant(name: plant.name, sensors: plant.sensors, maxPlants: settings.maxPlants)
        case let .deletePlant(name): .deletePlant(name: name)
        case let .renamePlant(rename): .renamePlant(from: rename.old, to: rename.new)
        }
    }

    /// What `request` comes to, given the store's `answer` to its ``operation(for:)`` (nil when it
    /// asked none), and what it changed: the follow-ups are computed from the change the store's
    /// operation returned, never from reading the plants before and after, which races when relays
    /// share a store.
    func outcome(of request: PlantRequest, answer given: consuming StoreAnswer?) -> (PlantAnswer, PlantChange?) {
        switch (request, given) {
        case let (.plantInfo(query), .plants(plants)?):
            let chosen: [StoredPlant]
            switch query {
            case .all: chosen = plants
            case let .plant(name): chosen = plants.filter { $0.name == name }
            case let .index(index): chosen = index < plants.count ? [plants[index]] : []
            }
            if chosen.isEmpty, query != .all { return (.error(.noPlantDataToRequest), nil) }
            return (.result(.plants(chosen.map { PlantSummary(name: $0.name, sensors: $0.sensors) })), nil)
        case let (.sensorData, .sensorRecords(records)?):
            return (sensorAnswer(records), nil)
        case let (.numPlants, .plants(plants)?):
            return (.result(.count(plants.count)), nil)
        case let (.addPlant(plant), .added(added)?):
            return switch added {
            case let .added(id): (.result(.added(plant.name)), .added(id: id, name: plant.name))
            case .nameTaken: (.error(.plantNameTaken), nil)
            case .tooManyPlants: (.error(.tooManyPlants), nil)
            }
        case let (.deletePlant(name), .deleted(id)?):
            guard let id else { return (.error(.cannotDeletePlant), nil) }
            return (.result(.deleted(name)), .deleted(id: id))
        case let (.renamePlant(rename), nil) where rename.old == rename.new:
            // Equal names: the original host answered nothing; there is nothing to change.
            return (.result(.renamed(rename.new)), nil)
        case let (.renamePlant(rename), .renamed(renamed)?):
            return switch renamed {
            case let .renamed(id): (.result(.renamed(rename.new)), .renamed(id: id, from: rename.old, to: rename.new))
            case .nameTaken: (.error(.plantNameTaken), nil)
            case .notFound: (.error(.cannotDeletePlant), nil)
            }
        default:
            return (.failed(UnexpectedStoreAnswer(answer: given)), nil)
        }
    }

    /// `REQ_plantSensorData`'s answer to the records the store gave: nil when the named plant does not exist.
    func sensorAnswer(_ records: [PlantSensorRecord]?) -> PlantAnswer {
        guard let records, !records.isEmpty else { return .error(.noPlantDataToRequest) }
        return .sensorRecords(records)
    }

    /// The wire messages of `answer` in `dialect`, and the error they carry if the answer is one.
    func wires(
        of answer: PlantAnswer, to request: PlantMessage, operation: PlantOperation,
        in dialect: PlantDialect
    ) -> (wires: PlantWires, error: PlantErrorTag?) {
        let rendering: PlantRendering
        switch answer {
        case let .result(result):
            rendering = dialect.render(result)
        case let .sensorRecords(records) where dialect == .lossless:
            return (
                PlantWires(
                    PlantProtocol.replyBytes(
                        to: request, operation: operation, payload: sensorData(records),
                        hostName: settings.hostName)), nil
            )
        case let .sensorRecords(records):
            rendering = dialect.render(.sensorRecords(records))
        case let .error(tag):
            rendering = .error(tag)
        case .failed:
            return (PlantWires(), nil)
        }
        switch rendering {
        case let .payloads(payloads):
            return (
                PlantWires(
                    payloads.compactMap {
                        dialect.wire(
                            dialect.reply(to: request, operation: operation, payload: $0, hostName: settings.hostName))
                    }), nil
            )
        case let .error(tag):
            let wire = dialect.wire(dialect.error(tag, for: request, hostName: settings.hostName))
            return (wire.map(PlantWires.init) ?? PlantWires(), tag)
        }
    }
}

/// The wire forms of one answer in one dialect, in order: none (a dialect that cannot carry it),
/// one (nearly every answer), or several (an answer the original dialect splits into messages).
///
/// One form is held as it is, not in an array of its own: a request answered on the network
/// thread would otherwise allocate and free an array of one on every reply, only to map it into
/// the messages to publish. (Several forms still come in the array the dialect rendered them in.)
struct PlantWires {
    private let first: [UInt8]?
    private let rest: [[UInt8]]

    /// No wire form.
    init() {
        first = nil
        rest = []
    }

    /// One wire form.
    init(_ one: [UInt8]) {
        first = one
        rest = []
    }

    /// Every form of `all`, in order.
    init(_ all: [[UInt8]]) {
        first = all.first
        rest = Array(all.dropFirst())
    }

    /// `transform` of each form, in order.
    func map<T>(_ transform: ([UInt8]) -> T) -> [T] {
        guard let first else { return [] }
        guard !rest.isEmpty else { return [transform(first)] }
        return [transform(first)] + rest.map(transform)
    }
}

/// Where a reply goes: the shared or per-client reply topic, in that topic's dialect, and also the
/// request's v5 Response Topic with its Correlation Data when it has one, always lossless.
struct ReplyRoute: Sendable {
    let service: PlantService
    /// The request's QoS and properties (its Response Topic and Correlation Data): all a reply
    /// needs of it, kept rather than a copy of the whole request.
    let requestQoS: QoS
    let requestProperties: MQTTProperties
    let client: String?
    /// Whether the request names a Response Topic outside its own reply space: decided once, and
    /// only for a request that names one.
    let refusesResponseTopic: Bool

    init(service: PlantService, request: MQTTMessage, client: String?) {
        self.service = service
        requestQoS = request.qos
        requestProperties = request.properties
        self.client = client
        refusesResponseTopic = ResponseTopicPolicy.refuses(
            request.properties.responseTopic, forRequest: request.topic,
            settings: service.settings)
    }

    /// The dialect of this route's reply topic: the setting on the shared topics, lossless per client.
    var dialect: PlantDialect { client == nil ? service.settings.plantDialect : .lossless }

    /// The messages of one error (or other single message) made for each dialect by `make`;
    /// a dialect that cannot carry it sends nothing.
    func messages(_ make: (PlantDialect) -> PlantMessage?) -> [MQTTMessage] {
        func wires(_ dialect: PlantDialect) -> PlantWires {
            make(dialect).flatMap(dialect.wire).map(PlantWires.init) ?? PlantWires()
        }
        return messages(wires(dialect), lossless: wires(.lossless))
    }

    /// The reply messages: `inDialect` (wire forms in ``dialect``) on the reply topic; on a Response
    /// Topic the lossless forms, computed only when there is one.
    func messages(_ inDialect: PlantWires, lossless: @autoclosure () -> PlantWires) -> [MQTTMessage] {
        let qos = PublishQoS.answer(to: requestQoS)
        let topic = client.map { "\(service.replyTopic)/\($0)" } ?? service.replyTopic
        guard let responseTopic = requestProperties.responseTopic, !refusesResponseTopic else {
            return inDialect.map { MQTTMessage(topic: topic, payload: $0, qos: qos) }
        }
        let correlated = MQTTProperties(correlationData: requestProperties.correlationData)
        if responseTopic == topic {
            // One message each, but they must still carry the Correlation Data the requester matches on.
            return inDialect.map { MQTTMessage(topic: topic, payload: $0, qos: qos, properties: correlated) }
        }
        return inDialect.map { MQTTMessage(topic: topic, payload: $0, qos: qos) }
            + (dialect == .lossless ? inDialect : lossless()).map {
                MQTTMessage(topic: responseTopic, payload: $0, qos: qos, properties: correlated)
            }
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

    /// The `ERR_kickedForSpam` answer to this message in `dialect`, when its sender can be answered.
    func kickMessage(hostName: String, dialect: PlantDialect) -> PlantMessage? {
        switch self {
        case let .request(message, _):
            dialect.error(.kickedForSpam, for: message, hostName: hostName)
        case let .rejected(rejection):
            dialect.error(.kickedForSpam, for: rejection, hostName: hostName)
        case .incomingError, .ownMessage:
            nil
        }
    }
}

/// A store's answer of another kind than the operation asked for: a fault of the store, answered
/// as any store failure is (`store_error`).
struct UnexpectedStoreAnswer: Error, CustomStringConvertible {
    let answer: StoreAnswer?
    var description: String { "the store answered \(answer.map { "\($0)" } ?? "nothing") to another operation" }
}

extension PlantService {
    /// The lossless `RES_plantSensorData` payload of `records`, rendered and encoded again only when they changed.
    func sensorData(_ records: [PlantSensorRecord]) -> EncodedPlantPayload {
        if let last = lastSensorData.withLock({ $0 }), last.records == records { return last.payload }
        let payload = EncodedPlantPayload(PlantPayloads.sensorData(records))
        lastSensorData.withLock { $0 = (records, payload) }
        return payload
    }
}
