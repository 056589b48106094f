import Foundation
import Testing
import TrellisCore
import TrellisMQTT
import TrellisStore
import TrellisTestSupport

/// The released Plant-Tracker iPhone app (1.0.0), its message handling ported in
/// ``PlantTrackerApp``, used as a person would use it against Trellis, with the shared topics in
/// their default (original) dialect: on the relay's engine over each store (``EngineBus``), and in
/// the default LAN profile on a real Mosquitto, whose access control the app must get through.
@Suite("The released iPhone app against Trellis")
struct PlantTrackerAppSessionTests {
    @Test(
        "a whole session: nothing Trellis sends is rejected by the app, crashes it, or is an operation it does not know",
        arguments: StoreKind.bothStores)
    func session(_ kind: StoreKind) async throws {
        try await withEngineBus(kind) { bus in
            let session = AppSession(strict: true, connect: { await PlantTrackerApp(on: bus) }) { topic, payload in
                await bus.publishAndWait(topic: topic, payload: Array(payload.utf8))
            }
            let phones = try await session.run()
            try await Self.check(phones, sent: bus.received(on: "rpi/fromrpi").compactMap(\.text))
        }
    }

    @Test(
        "seven plants in normal use: a refresh counts once, so connecting, updating, renaming and deleting in seconds is not spam",
        arguments: StoreKind.bothStores)
    func sevenPlantsAreNotSpam(_ kind: StoreKind) async throws {
        try await withEngineBus(kind) { bus in
            let store = bus.harness.store
            for index in 1...7 {
                #expect(
                    try await store.addPlant(name: "Plant \(index)", sensors: ["0x\(30 + index)"], maxPlants: 7).plantID
                        != nil)
            }
            let phone = await PlantTrackerApp(on: bus)
            try await phone.wait("seven plants shown") { $0.displayedPlants.count == 7 }
            for round in 1...2 {
                await phone.requestData()
                let shown = await phone.state.displays
                await phone.rename("Plant \(round)", to: "Renamed \(round)")
                try await phone.wait("the rename shown") {
                    $0.displays > shown && $0.displayedPlants.contains("Renamed \(round)")
                }
                let again = await phone.state.displays
                await phone.refreshPlantsDisplayed()
                try await phone.wait("a refresh shown") { $0.displays > again }
            }
            let shown = await phone.state.displays
            await phone.delete("Plant 7")
            try await phone.wait("the delete shown") { $0.displays > shown && $0.displayedPlants.count == 6 }
            let state = await phone.state
            #expect(!state.alerts.contains("ERR_kickedForSpam"))
            #expect(state.crashes == [] && state.sentErrors == [])
            #expect(
                state.handled["RES_plantInfoOnStartup"] ?? 0 > 15, "more than 15 messages in all, none of them spam")
            await phone.disconnect()
        }
    }

    /// Checks what the two phones of a session saw, and what Trellis `sent` on the shared reply topic.
    static func check(_ phones: (PlantTrackerApp, PlantTrackerApp), sent: [String]) async throws {
        let (first, second) = phones
        for phone in [first, second] {
            let state = await phone.state
            #expect(state.crashes == [], "the app would have crashed")
            #expect(state.sentErrors == [], "the app rejected a message of Trellis")
            #expect(!state.disconnected)
        }
        // What went over the shared reply topic: only operations the app knows, five non-empty fields.
        let known: Set = [
            "RES_numPlants", "RES_plantInfoOnStartup", "RES_plantSensorData",
            "ERR_plantNameTaken", "ERR_plantNameTooLong"
        ]
        #expect(!sent.isEmpty)
        for message in sent {
            let fields = message.split(separator: ";").map { $0.split(separator: ":") }
            #expect(fields.count == 5 && fields.allSatisfy { $0.count == 2 }, "\(message)")
            let operation = fields.last.map { String($0.last ?? "") } ?? ""
            #expect(known.contains(operation), "\(message)")
            #expect(message.hasPrefix("ID:0;sender:Host-RPI3B+;"), "\(message)")
        }
        // The rename kept the plant's sensors, so its reading is still found under the new name.
        #expect(await second.state.displayedMoisture["Thai Basil"] == 2)
    }

    @Test(
        "the same session in the default LAN profile: the app, anonymous, has only rpi/torpi and rpi/fromrpi, and gets every answer"
    )
    func sessionInLANProfile() async throws {
        try await withLANProfileRelay { relay in
            let (_, wire) = try await relay.connectCollecting("rpi/fromrpi")
            // The readings come from an account; the app and the wire watcher are anonymous.
            let sensors = try await relay.connect(id: "ops") {
                $0.username = "ops"; $0.password = "pw-ops"
            }
            let (host, port) = (relay.broker.host, relay.broker.port)
            let session = AppSession(strict: true, connect: { try await PlantTrackerApp(host: host, port: port) }) {
                topic, payload in
                try await sensors.publishAndWait(topic: topic, payload: Array(payload.utf8))
            }
            let phones = try await session.run()
            try await Self.check(phones, sent: await wire.received(on: "rpi/fromrpi").compactMap(\.text))
        }
    }

    /// The same session against another host on a running broker, for a comparison by hand:
    /// `TRELLIS_APP_SESSION_BROKER=127.0.0.1:1883 swift test --filter PlantTrackerAppSessionTests`
    /// prints what the app showed at each step.
    @Test(
        "the session against another host, by hand",
        .enabled(if: ProcessInfo.processInfo.environment["TRELLIS_APP_SESSION_BROKER"] != nil))
    func sessionAgainstAnotherHost() async throws {
        let address = ProcessInfo.processInfo.environment["TRELLIS_APP_SESSION_BROKER"] ?? ""
        let parts = address.split(separator: ":")
        let host = String(parts.first ?? "127.0.0.1"), port = Int(parts.last ?? "") ?? 1883
        let sensors = try MQTTClient(
            configuration: MQTTConfiguration(host: host, port: port, clientID: "session-sensors"))
        sensors.start()
        try await sensors.waitUntilConnected()
        let session = AppSession(strict: false, connect: { try await PlantTrackerApp(host: host, port: port) }) {
            topic, payload in
            try await sensors.publishAndWait(topic: topic, payload: Array(payload.utf8))
        }
        let (first, second) = try await session.run()
        await sensors.shutdown()
        print("--- the session\n\(session.transcript.text)")
        for phone in [first, second] {
            print("--- \(phone.clientName) received\n" + (await phone.state.received).joined(separator: "\n"))
            print("--- \(phone.clientName) published\n" + (await phone.state.published).joined(separator: "\n"))
        }
    }
}

/// The session a new user goes through, step by step, against whatever serves the app's topics:
/// Trellis in the tests (`strict`: every wait must succeed), or another host by hand (a wait that
/// times out is written to the transcript and the session goes on).
struct AppSession {
    let strict: Bool
    /// A new phone, connected and refreshing.
    let connect: @Sendable () async throws -> PlantTrackerApp
    /// Publishes a sensor reading (JSON) on a topic, acknowledged.
    let publish: @Sendable (String, String) async throws -> Void
    /// What happened, step by step, for a comparison by hand.
    let transcript = Transcript()

    final class Transcript: @unchecked Sendable {
        private let lock = NSLock()
        private var lines: [String] = []
        func add(_ line: String) { lock.withLock { lines.append(line) } }
        var text: String { lock.withLock { lines.joined(separator: "\n") } }
    }

    /// Waits for a state of `phone`; outside `strict`, a timeout is noted and the session goes on.
    func step(
        _ phone: PlantTrackerApp, _ description: String,
        until predicate: @escaping @Sendable (PlantTrackerApp.State) -> Bool
    ) async throws {
        do {
            try await phone.wait(description, timeout: strict ? .seconds(30) : .seconds(3), until: predicate)
            transcript.add("ok: \(description)")
        } catch {
            transcript.add("NOT SEEN: \(description)")
            if strict { throw error }
        }
        let state = await phone.state
        transcript.add(
            "   shown \(state.displayedPlants) moisture \(state.displayedMoisture.sorted { $0.key < $1.key }) alerts \(state.alerts) rejected \(state.sentErrors) crashes \(state.crashes)"
        )
    }

    /// Runs the session; returns the two phones.
    func run() async throws -> (PlantTrackerApp, PlantTrackerApp) {
        // A fresh install: the phone connects and refreshes.
        let phone = try await connect()
        try await step(phone, "the plant count of a fresh install") { $0.handled["RES_numPlants"] == 1 }

        // Two plants, one with one sensor, one with two, typed as a user would (with and without 0x).
        var shown = await phone.state.displays
        await phone.addPlant(name: "Fern", sensors: ["0x36"])
        try await step(phone, "Fern shown") { [shown] in $0.displays > shown && $0.displayedPlants == ["Fern"] }
        shown = await phone.state.displays
        await phone.addPlant(name: "Basil", sensors: ["37", "0x38"])
        try await step(phone, "Fern and Basil shown") { [shown] in
            $0.displays > shown && $0.displayedPlants == ["Fern", "Basil"]
        }

        // Readings: 0x36 and 0x37 report, 0x38 never does.
        try await publish("rpi/sensors/0x36", #"{"moisture": 7, "temperature": 71.6}"#)
        try await publish("rpi/sensors/0x37", #"{"moisture": 4, "temperature": 68}"#)

        // Update Plant Data: the app keeps one reading per plant and divides by the plant's sensors.
        await phone.requestData()
        try await step(phone, "moisture Fern 7, Basil 2") { $0.displayedMoisture == ["Fern": 7, "Basil": 2] }
        let details = await phone.details(of: "Fern") ?? ""
        transcript.add("   Fern's details: \(details.debugDescription)")
        if strict { #expect(details == "\n0x36 - Moisture: 7, Temp: 72°F") }

        // A rename, then a rename to a taken name and to a name over 15 characters.
        shown = await phone.state.displays
        await phone.rename("Basil", to: "Thai Basil")
        try await step(phone, "Basil renamed Thai Basil") { [shown] in
            $0.displays > shown && $0.displayedPlants == ["Fern", "Thai Basil"]
        }
        shown = await phone.state.displays
        await phone.rename("Fern", to: "Thai Basil")
        try await step(phone, "ERR_plantNameTaken, nothing renamed") { [shown] in
            $0.alerts.contains("ERR_plantNameTaken") && $0.displays > shown
                && $0.displayedPlants == ["Fern", "Thai Basil"]
        }
        shown = await phone.state.displays
        await phone.rename("Fern", to: "Boston Sword Fern")
        try await step(phone, "ERR_plantNameTooLong, nothing renamed") { [shown] in
            $0.alerts.contains("ERR_plantNameTooLong") && $0.displays > shown
                && $0.displayedPlants == ["Fern", "Thai Basil"]
        }

        // A delete.
        shown = await phone.state.displays
        await phone.delete("Fern")
        try await step(phone, "Fern deleted") { [shown] in $0.displays > shown && $0.displayedPlants == ["Thai Basil"] }

        // A second phone of the household sees the same plants and their readings.
        let second = try await connect()
        try await step(second, "the second phone shows Thai Basil") { $0.displayedPlants == ["Thai Basil"] }
        await second.requestData()
        try await step(second, "the second phone shows Thai Basil's moisture") {
            $0.displayedMoisture == ["Thai Basil": 2]
        }
        await phone.disconnect()
        await second.disconnect()
        return (phone, second)
    }
}
