import Foundation
import Logging
import Testing
@testable import TrellisRelay
import TrellisCore
import TrellisMQTTTypes
import TrellisStore
import TrellisTestSupport

/// A plant request's steps (``PlantRequestSteps``) as plain values: a message goes in, then the
/// store's answers, written out here; each step's output or next store operation is checked. No
/// broker and no store is asked (the engine only gives the steps their settings and logger).
@Suite("A plant request's steps, fed the store's answers")
struct PlantRequestStepsTests {
    static let now = Date(timeIntervalSince1970: 1_790_000_000)
    static let fern = PlantSensorRecord(plant: "Fern", sensor: "0x36", moisture: 41, temperature: 21.5, at: now)

    /// Runs `body` with the steps of the shared request topic (or the per-client one of `client`)
    /// and their context, over an engine with `settings`.
    static func withSteps(
        _ settings: RelaySettings = .losslessPlants, client: String? = nil,
        _ body: (inout PlantRequestSteps, HandlerContext) async throws -> Void
    ) async throws {
        try await withStore(.inMemory) { store in
            let engine = Relay.engine(store: store, settings: settings, logger: Logger(label: "test"))
            let service = PlantService(settings: settings)
            var steps = PlantRequestSteps(service: service, client: client)
            let context = HandlerContext(captures: client.map { [$0] } ?? [], now: now, engine: engine)
            try await body(&steps, context)
        }
    }

    static func request(
        _ operation: String, payload: String = "", from sender: String = "Bob", topic: String = "rpi/torpi",
        retain: Bool = false, properties: MQTTProperties = MQTTProperties()
    ) -> MQTTMessage {
        MQTTMessage(
            topic: topic, text: Wire.request("1", from: sender, operation, payload: payload), retain: retain,
            properties: properties)
    }

    /// The operation `step` waits for; nil when it does not wait for the store.
    static func operation(_ step: Step) -> StoreOperation? {
        if case let .store(operation) = step { operation } else { nil }
    }

    /// The output of a finished `step`; nil when it waits.
    static func output(_ step: Step) -> HandlerOutput? {
        if case let .done(output) = step { output } else { nil }
    }

    @Test("REQ_plantSensorData: counted, then the records read, then the answer")
    func sensorData() async throws {
        try await Self.withSteps { steps, context async throws in
            let message = Self.request("REQ_plantSensorData", payload: "Fern")
            guard
                case let .admitMessage(sender, at, limit, _, usingAllowance)? = Self.operation(
                    steps.start(message, context: context, answering: nil))
            else { Issue.record("not counted first"); return }
            #expect(sender == "Bob" && at == Self.now && limit == context.settings.spamLimit && !usingAllowance)
            guard
                case let .sensorRecords(plant)? = Self.operation(
                    steps.resume(.success(.verdict(.allowed)), message: message, context: context, answering: nil))
            else { Issue.record("the records not read next"); return }
            #expect(plant == "Fern")
            let output = Self.output(
                steps.resume(.success(.sensorRecords([Self.fern])), message: message, context: context, answering: nil))
            #expect(output?.publishes.map(\.topic) == ["rpi/fromrpi"])
            #expect(output?.publishes.first?.text?.hasSuffix(";operation:RES_plantSensorData") == true)
            #expect(output?.publishes.first?.text?.contains("0x36") == true)
            #expect(output?.deadLetters.isEmpty == true)
        }
    }

    @Test("an unknown plant: ERR_noPlantDataToRequest and its dead letter")
    func unknownPlant() async throws {
        try await Self.withSteps { steps, context async throws in
            let message = Self.request("REQ_plantSensorData", payload: "Cactus")
            _ = steps.start(message, context: context, answering: nil)
            _ = steps.resume(.success(.verdict(.allowed)), message: message, context: context, answering: nil)
            let output = Self.output(
                steps.resume(.success(.sensorRecords(nil)), message: message, context: context, answering: nil))
            #expect(output?.publishes.first?.text?.hasSuffix(";operation:ERR_noPlantDataToRequest") == true)
            #expect(output?.deadLetters.map(\.reason) == ["ERR_noPlantDataToRequest"])
        }
    }

    @Test("over the spam limit: kicked once with an answer, then muted with a dead letter alone")
    func spam() async throws {
        try await Self.withSteps { steps, context async throws in
            let message = Self.request("REQ_plantSensorData", payload: "all")
            _ = steps.start(message, context: context, answering: nil)
            let kicked = Self.output(
                steps.resume(.success(.verdict(.kicked)), message: message, context: context, answering: nil))
            #expect(kicked?.publishes.first?.text?.hasSuffix(";operation:ERR_kickedForSpam") == true)
            #expect(kicked?.deadLetters.map(\.reason) == ["ERR_kickedForSpam"])
        }
        try await Self.withSteps { steps, context async throws in
            let message = Self.request("REQ_plantSensorData", payload: "all")
            _ = steps.start(message, context: context, answering: nil)
            let muted = Self.output(
                steps.resume(.success(.verdict(.muted)), message: message, context: context, answering: nil))
            #expect(muted?.publishes.isEmpty == true && muted?.deadLetters.map(\.reason) == ["spam_muted"])
        }
    }

    @Test("refused before counting: a retained request, a sender not matching its topic; nothing asked of the store")
    func refusedBeforeCounting() async throws {
        try await Self.withSteps { steps, context async throws in
            let output = Self.output(
                steps.start(Self.request("REQ_numPlants", retain: true), context: context, answering: nil))
            #expect(output?.deadLetters.map(\.reason) == ["retained_request"])
        }
        try await Self.withSteps(client: "Bob") { steps, context async throws in
            let message = Self.request("REQ_numPlants", from: "Alice", topic: "rpi/torpi/Bob")
            #expect(
                Self.output(steps.start(message, context: context, answering: nil))?.deadLetters.map(\.reason) == [
                    "sender_mismatch"
                ])
        }
    }

    @Test("a store that fails: counting lets the request through; answering dead-letters it as store_error")
    func storeFailures() async throws {
        struct Down: Error {}
        try await Self.withSteps { steps, context async throws in
            let message = Self.request("REQ_numPlants")
            _ = steps.start(message, context: context, answering: nil)
            guard
                case .plants? = Self.operation(
                    steps.resume(.failure(Down()), message: message, context: context, answering: nil))
            else { Issue.record("not answered after a failed count"); return }
            let output = Self.output(steps.resume(.failure(Down()), message: message, context: context, answering: nil))
            #expect(output?.publishes.isEmpty == true && output?.deadLetters.map(\.reason) == ["store_error"])
        }
    }

    @Test("REQ_numPlants in the released app's dialect: the count grants the refresh's index reads, then the answer")
    func numPlantsGrants() async throws {
        try await Self.withSteps(RelaySettings()) { steps, context async throws in
            let message = Self.request("REQ_numPlants")
            _ = steps.start(message, context: context, answering: nil)
            _ = steps.resume(.success(.verdict(.allowed)), message: message, context: context, answering: nil)
            let plant = StoredPlant(id: 1, name: "Fern", sensors: ["0x36"], createdAt: Self.now)
            guard
                case let .grantAllowance(sender, count)? = Self.operation(
                    steps.resume(.success(.plants([plant])), message: message, context: context, answering: nil))
            else { Issue.record("no grant"); return }
            #expect(sender == "Bob" && count == 1)
            let output = Self.output(
                steps.resume(.success(.granted), message: message, context: context, answering: nil))
            #expect(output?.publishes.first?.text?.hasSuffix(";operation:RES_numPlants") == true)
        }
    }

    @Test("REQ_addNewPlant: added by one store operation, then its follow-ups as the service's work")
    func addPlant() async throws {
        var settings = RelaySettings.losslessPlants
        settings.homeAssistantEnabled = false
        try await Self.withSteps(settings) { steps, context async throws in
            let message = Self.request("REQ_addNewPlant", payload: "Fern,0x36")
            _ = steps.start(message, context: context, answering: nil)
            let add = Self.operation(
                steps.resume(.success(.verdict(.allowed)), message: message, context: context, answering: nil))
            guard case let .addPlant(name, sensors, _)? = add else {
                Issue.record("not added: \(String(describing: add))"); return
            }
            #expect(name == "Fern" && sensors == ["0x36"])
            guard
                case .work = steps.resume(
                    .success(.added(.added(id: 7))), message: message, context: context, answering: nil)
            else { Issue.record("no follow-ups"); return }
            let output = Self.output(await steps.work(message, context: context))
            #expect(output?.publishes.first?.text?.hasSuffix(";operation:RES_addNewPlant") == true)
        }
    }

    @Test("a Response Topic outside the requester's reply space: answered on the reply topic, and dead-lettered")
    func refusedResponseTopic() async throws {
        try await Self.withSteps { steps, context async throws in
            let message = Self.request(
                "REQ_plantSensorData", payload: "Fern",
                properties: MQTTProperties(responseTopic: "bob/inbox", correlationData: [1]))
            _ = steps.start(message, context: context, answering: nil)
            _ = steps.resume(.success(.verdict(.allowed)), message: message, context: context, answering: nil)
            let output = Self.output(
                steps.resume(.success(.sensorRecords([Self.fern])), message: message, context: context, answering: nil))
            #expect(output?.publishes.map(\.topic) == ["rpi/fromrpi"])
            #expect(output?.deadLetters.map(\.reason) == [ResponseTopicPolicy.refusedReason])
        }
    }
}
