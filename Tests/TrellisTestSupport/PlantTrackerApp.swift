import Foundation
import TrellisMQTT

/// The message handling of the released Plant-Tracker iPhone app (1.0.0, `Plant Tracker/ViewController.swift`
/// of `JonathanUhler/Plant-Tracker`), ported line by line so that Trellis can be tested against what
/// a real phone does with each message. Only the drawing is left out; every parse, every check,
/// every force-unwrap and force-cast, and every message the app publishes in return is kept.
///
/// Where the app would trap (a force-unwrap of `nil`, a failed `as!`, a division by zero, an
/// invalid range), the port records a crash in ``State/crashes`` and stops handling that message,
/// so one test run shows every one. The `ERR_` messages the app itself publishes back on
/// `rpi/torpi` (its `operationError`) are kept in ``State/sentErrors``, the alerts it would show
/// (its `popupError`) in ``State/alerts``.
///
/// Transport: MQTT on the broker, client id = `clientName` (a UUID, as identifierForVendor),
/// subscribed to `rpi/fromrpi`, requests on `rpi/torpi` at QoS 1, as CocoaMQTT publishes them; or
/// the same topics on a relay's engine in the test process (``EngineBus``), for the services'
/// answers on each store without a broker.
public actor PlantTrackerApp {
    /// What the app shows and did, as plain values a test can read.
    public struct State: Sendable {
        /// The plant names on screen, in order (`displayPlantsOnScreen`).
        public var displayedPlants: [String] = []
        /// How many times the plants were drawn.
        public var displays = 0
        /// The moisture drawn for each plant, by name, at the last Update Plant Data answer.
        public var displayedMoisture: [String: Int] = [:]
        /// `RES_` messages handled, by operation.
        public var handled: [String: Int] = [:]
        /// Error tags the app published back (it rejected a message).
        public var sentErrors: [String] = []
        /// Where the app would have trapped.
        public var crashes: [String] = []
        /// Alerts shown, by error code.
        public var alerts: [String] = []
        /// Every message received on `rpi/fromrpi`, as text.
        public var received: [String] = []
        /// Every message the app published, as text.
        public var published: [String] = []
        /// Whether the app disconnected itself (after `ERR_kickedForSpam`).
        public var disconnected = false
    }

    public nonisolated let clientName: String
    let hostName = "Host-RPI3B+"
    let rpi_torpi = "rpi/torpi"
    let rpi_fromrpi = "rpi/fromrpi"
    let maxPlants = 7
    let maxPlantName = 15

    /// The connection to the broker, or nil on an engine's bus.
    let client: MQTTClient?
    /// The engine's topics, or nil on a broker.
    let bus: EngineBus?
    private var busSubscription: UUID?
    private var drain: Task<Void, Never>?
    private let waiters = StateWaiters<State>()

    // The app's own state (ViewController's properties).
    var plantJSON: [Any] = []
    var sensorJSON: [[String: Any]] = []
    var pendingPlantDataRequests = 0
    /// The plants that can be tapped (the app's tapGestureList, holding each plant's info).
    var tapGestureList: [[String: Any]] = []
    public internal(set) var state = State()

    /// Connects a new phone to `host:port` (the connection switch) and refreshes, as the app does.
    public init(host: String, port: Int, clientName: String = UUID().uuidString) async throws {
        self.clientName = clientName
        var configuration = MQTTConfiguration(host: host, port: port, clientID: clientName, reconnectDelay: 0.05...0.5)
        configuration.cleanStart = true
        let client = try MQTTClient(configuration: configuration)
        self.client = client
        bus = nil
        client.start()
        try await client.waitUntilConnected()
        begin(client)
        try await client.subscribe(rpi_fromrpi)
        refreshPlantsDisplayed()
    }

    /// Connects a new phone to the topics of a relay's engine and refreshes, as the app does.
    public init(on bus: EngineBus, clientName: String = UUID().uuidString) async {
        self.clientName = clientName
        self.bus = bus
        client = nil
        busSubscription = bus.subscribe(rpi_fromrpi) { [weak self] message in
            await self?.didReceiveMessage(message.payload)
        }
        refreshPlantsDisplayed()
    }

    /// Publishes on the broker or the bus, as CocoaMQTT does: QoS 1, without waiting.
    func send(topic: String, payload: [UInt8]) throws {
        if let bus {
            bus.publish(topic: topic, payload: payload)
        } else {
            try client?.publish(topic: topic, payload: payload, qos: .atLeastOnce)
        }
    }

    private func begin(_ client: MQTTClient) {
        let stream = client.messages
        drain = Task { [weak self] in
            for await message in stream {
                await self?.didReceiveMessage(message.payload)
            }
        }
    }

    /// Disconnects (the connection switch turned off).
    public func disconnect() async {
        drain?.cancel()
        await client?.shutdown()
        if let busSubscription { bus?.unsubscribe(busSubscription) }
    }

    /// `mqttClient.didReceiveMessage`: `decodeIncomingResponse(entireMsg: message.string!)`.
    func didReceiveMessage(_ payload: [UInt8]) {
        guard let text = String(validating: payload, as: UTF8.self) else {
            crash("message.string! of a payload that is not UTF-8")
            return settle()
        }
        state.received.append(text)
        decodeIncomingResponse(entireMsg: text)
        settle()
    }

    // MARK: Waiting

    /// Waits until `predicate` holds for the app's state; throws after `timeout`.
    public func wait(
        _ description: String, timeout: Duration = .seconds(30),
        until predicate: @escaping @Sendable (State) -> Bool
    ) async throws {
        try await waiters.wait(on: { state }, timeout: timeout, until: predicate) {
            "\(clientName.prefix(8)): timed out after \(timeout) waiting for \(description); last received: \(state.received.suffix(4))"
        }
    }

    private func settle() {
        waiters.settle(state)
    }

    func crash(_ what: String) {
        state.crashes.append(what)
    }

    // MARK: What the user does

    /// `refreshPlantsDisplayed`: forget the plants and ask for their number.
    public func refreshPlantsDisplayed() {
        plantJSON = []
        tapGestureList = []
        publishOutgoingRequest(
            msgID: "0", sender: clientName, receiver: hostName, payload: "", operation: "REQ_numPlants")
    }

    /// The Update Plant Data button (`requestData`).
    public func requestData() {
        sensorJSON = []
        publishOutgoingRequest(
            msgID: "0", sender: clientName, receiver: hostName, payload: "all", operation: "REQ_plantSensorData")
    }

    /// The New Plant dialogs (`addPlant`): a name, a number of sensors (1–4), then each sensor's text.
    public func addPlant(name plantName: String, sensors typed: [String]) {
        let numSensors = String(typed.count)
        guard let amount = Int(numSensors), amount < 5, amount > 0 else {
            popupError(errorCode: "ERR_addPlantSensorNumIssue")
            return
        }
        var sensors = [] as [Any]
        for i in 0...amount - 1 {
            sensors.append(typed[i])
        }
        publishOutgoingRequest(
            msgID: "0", sender: clientName, receiver: hostName, payload: "\(plantName)--\(sensors)",
            operation: "REQ_addNewPlant")
        refreshPlantsDisplayed()
    }

    /// Tapping a plant's box, then Settings, then Save Changes with `newName` (`plantSettings`).
    public func rename(_ plant: String, to newName: String) {
        guard let plantInfo = tappedPlant(plant) else { return }
        publishOutgoingRequest(
            msgID: "0", sender: clientName, receiver: hostName,
            payload: "\(plantInfo["Name"]!),\(newName)", operation: "REQ_editPlant")
        refreshPlantsDisplayed()
    }

    /// Tapping a plant's box, then Settings, then Delete Plant (`plantSettings`).
    public func delete(_ plant: String) {
        guard let plantInfo = tappedPlant(plant) else { return }
        publishOutgoingRequest(
            msgID: "0", sender: clientName, receiver: hostName,
            payload: "\(plantInfo["Name"]!)", operation: "REQ_deletePlant")
        refreshPlantsDisplayed()
    }

    /// Tapping a plant's box (`handleTap`): the details text the alert shows, or nil when no box
    /// shows that plant.
    public func details(of plant: String) -> String? {
        guard let plantInfo = tappedPlant(plant) else { return nil }
        var sensorDetailMsg = ""
        if sensorJSON.count > 0 {
            for j in 0...sensorJSON.count - 1 {
                guard let tappedName = plantInfo["Name"] as? String else {
                    crash("i.plantInfo![\"Name\"] as! String"); return nil
                }
                guard let sensorPlant = sensorJSON[j]["plant"] as? String else {
                    crash("sensorJSON[j][\"plant\"] as! String"); return nil
                }
                if tappedName == sensorPlant {
                    guard let sensor = sensorJSON[j]["sensor"] else { crash("sensorJSON[j][\"sensor\"]!"); return nil }
                    sensorDetailMsg.append(
                        "\n\(String(describing: sensor)) - Moisture: \(sensorJSON[j]["moisture"] ?? "no value"), Temp: \(sensorJSON[j]["temperature"] ?? "no value")°F"
                    )
                }
            }
        } else {
            sensorDetailMsg.append("\nNo data. Try pressing 'Update Plant Data' first")
        }
        return sensorDetailMsg
    }

    /// The plant info a tap on `plant`'s box hands on, as `ArgumentTapGestureRecognizer.plantInfo`.
    private func tappedPlant(_ plant: String) -> [String: Any]? {
        tapGestureList.first { ($0["Name"] as? String) == plant }
    }
}
