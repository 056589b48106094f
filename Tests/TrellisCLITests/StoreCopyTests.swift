import Foundation
import Testing
import TrellisCore
import TrellisStore
import TrellisStorePostgres
import TrellisStoreSQLite
import TrellisTestSupport
import TrellisApplication
@testable import trellis

/// `trellis store copy`: a state made on SQLite, copied into a fresh PostgreSQL database by the command
/// (run in the process, its target from `TRELLIS_STATE_STORE`), then served from there by the relay's
/// engine as the old relay served it; the way back and the refusals run the copy (`StateCopy`). The
/// `store` family's run of the binary is `StoreBackupTests`'.
@Suite("trellis store copy", .enabled(if: PostgresTestServer.isRequired))
struct StoreCopyTests {
    /// Fills an SQLite state with a row in every table the copy moves.
    static func makeState(in directory: String) async throws {
        let store = try SQLiteStore(directory: directory)
        let start = Date(timeIntervalSince1970: 1_795_344_000)
        #expect(try await store.addPlant(name: "Fern", sensors: ["0x36", "0x37"], maxPlants: 7).plantID != nil)
        #expect(try await store.addPlant(name: "Ivy", sensors: ["0x38"], maxPlants: 7).plantID != nil)
        try await store.recordReading(sensor: "0x36", moisture: 512, temperature: 71.5, at: start)
        _ = try await store.register(client: "phone", button: "door", at: start)
        try await store.setClientStatus(client: "phone", online: false, at: start)
        for second in 1...3 {
            _ = try await store.recordPress(button: "door", at: start + Double(second), historyLimit: 20)
        }
        try await store.recordDeadLetter(reason: "bad_utf8", topic: "rpi/torpi", payload: [0xFF, 0x00], at: start)
        let species = Species(
            symbol: "ABC", scientificName: "Abies concolor", commonName: "white fir", moistureUse: .medium,
            shadeTolerance: .tolerant, minTempF: -30)
        _ = try await store.upsertSpecies([species])
        #expect(try await store.addLike(client: "phone", symbol: "ABC", at: start) == .added)
        guard
            case let .created(board) = try await store.createBoard(
                client: "phone", name: "Trees", description: "tall",
                isPublic: true, maxBoards: 5, at: start)
        else {
            Issue.record("no board")
            return
        }
        _ = try await store.addToBoard(client: "phone", id: board.id, symbols: ["ABC"], maxItems: 10)
        #expect(try await store.linkPlant(plant: "Fern", symbol: "ABC", at: start) == .linked)
        _ = try await store.registerDevice(id: "dev1", maxDevices: 10, at: start)
        let model = try #require(try await store.createModel(name: "M1", at: start))
        _ = try await store.addBuild(model: model.id, deviceCode: "print(1)", agentCode: "agent()", at: start)
        try await store.appendDeviceLog(
            device: "dev1", entry: DeviceLogEntry(timestamp: start, type: "info", message: "up"), limit: 10)
        try await store.close()
    }

    /// What `trellis store copy ARGUMENTS` prints, run in the process as the binary runs it, with
    /// `TRELLIS_STATE_STORE` naming `url` (the target when there is no --to).
    static func copied(_ arguments: [String], into url: PostgresURL) async throws -> [String] {
        let command = try #require(
            try TrellisCommand.parseAsRoot(["store", "copy"] + arguments) as? StoreCommand.Copy)
        return try await EffectiveConfiguration.$environment.withValue(["TRELLIS_STATE_STORE": url.urlWithPassword]) {
            try await command.copied()
        }
    }

    @Test(
        "a state copied from SQLite reads back the same on PostgreSQL, a second copy is refused, and a relay serves it")
    func copyAndServe() async throws {
        let state = temporaryDirectory()
        try await Self.makeState(in: state)
        try await PostgresTestServer.withDatabase { url in
            let copied = try await Self.copied(["--from", state], into: url)
            #expect(copied.contains("plant: 2 rows"), "\(copied)")
            #expect(copied.contains("button_press: 3 rows"), "\(copied)")
            #expect(!copied.joined().contains(url.password ?? "no password"), "the password was printed")

            // A CommandFailure: the executable prints it and exits 1.
            await #expect {
                try await Self.copied(["--from", state], into: url)
            } throws: {
                $0 is CommandFailure && "\($0)".contains("already holds a state")
            }
            _ = try await Self.copied(["--from", state, "--replace"], into: url)

            let sqlite = try SQLiteStore(directory: state)
            let postgres = try await PostgresStore.connect(url, owner: "checker")
            #expect(try await postgres.counts() == sqlite.counts())
            #expect(try await postgres.plants() == sqlite.plants())
            #expect(try await postgres.sensorRecords(plant: nil) == sqlite.sensorRecords(plant: nil))
            #expect(try await postgres.button(id: "door") == sqlite.button(id: "door"))
            #expect(try await postgres.client(id: "phone") == sqlite.client(id: "phone"))
            #expect(try await postgres.deadLetters(limit: 10) == sqlite.deadLetters(limit: 10))
            // A plant added after the copy gets a fresh id, past the copied ones.
            #expect(try await postgres.addPlant(name: "Moss", sensors: [], maxPlants: 7).plantID != nil)
            #expect(try await postgres.plants().map(\.id) == [1, 2, 3])
            #expect(try await postgres.deletePlant(name: "Moss") == 3)
            try await sqlite.close()
            try await postgres.close()

            // The relay on the copy answers as the old one did: two plants, three presses missed (`count`).
            try await closing(try await PostgresStore.connect(url, owner: "relay")) { store in
                let relay = EngineHarness(store: store)
                let ask = "ID:1;sender:phone;receiver:Host-RPI3B+;payload:;operation:REQ_numPlants"
                let count = await relay.send(ask, on: "rpi/torpi/phone").first { $0.topic == "rpi/fromrpi/phone" }
                #expect(count?.text == "ID:1;sender:Host-RPI3B+;receiver:phone;payload:2;operation:RES_numPlants")
                let registered = await relay.send("door", on: "p2o/clients/phone/register").first {
                    $0.topic == "p2o/clients/phone/register-response"
                }
                #expect(
                    registered?.text?.hasPrefix(#"{"button":{"count":3,"history":["#) == true,
                    "\(registered?.text ?? "")")
                try await store.flush()
            }
        }
    }

    /// The way back, for a household that leaves a share group for one relay on a Raspberry Pi: the
    /// PostgreSQL state comes into a new SQLite state directory, and reads back as it was made. The copy
    /// is `StateCopy`'s, which the command runs, here in-process; a relay's hold on the target is the
    /// lock `trellis run` takes (`StateHold`).
    @Test(
        "back from PostgreSQL into a state directory: the same dump, refused when occupied or while a relay runs on it")
    func copyBack() async throws {
        let original = temporaryDirectory()
        try await Self.makeState(in: original)
        try await PostgresTestServer.withDatabase { url in
            let there = try await StateCopy.copy(from: original, to: url.urlWithPassword, replacing: false)
            #expect(there.rows.contains { $0.table == "plant" && $0.rows == 2 })
            let back = temporaryDirectory() + "/new-state"
            let copied = try await StateCopy.copy(from: url.urlWithPassword, to: back, replacing: false)
            #expect(copied.rows.contains { $0.table == "device_log" && $0.rows == 1 })
            #expect(!copied.source.description.contains(url.password ?? "no password"), "the password is named")

            let source = try SQLiteStore(directory: original)
            let target = try SQLiteStore(directory: back)
            #expect(try await target.exportState() == source.exportState())
            // Ids continue past the copied ones.
            #expect(try await target.addPlant(name: "Moss", sensors: [], maxPlants: 7).plantID == 3)
            try await source.close()
            try await target.close()

            let again = await Self.refusal(from: url.urlWithPassword, to: back)
            #expect(again.contains("already holds a state"), "\(again)")

            let relay = try StateHold.take(.sqlite(directory: back), for: .changeBesideRelays)
            let busy = await Self.refusal(from: url.urlWithPassword, to: back, replacing: true)
            #expect(busy.contains("a relay is running on"), "\(busy)")
            relay.release()
            _ = try await StateCopy.copy(from: url.urlWithPassword, to: back, replacing: true)
            let reread = try SQLiteStore(directory: back)
            #expect(try await reread.plants().map(\.name) == ["Fern", "Ivy"])
            try await reread.close()
        }
    }

    /// Why `StateCopy` refuses to copy `source` into `target`.
    static func refusal(from source: String, to target: String, replacing: Bool = false) async -> String {
        do {
            _ = try await StateCopy.copy(from: source, to: target, replacing: replacing)
            return "copied"
        } catch {
            return "\(error)"
        }
    }

    @Test("bad sources and targets are refused with a clear message")
    func refusals() async throws {
        let empty = temporaryDirectory()
        let noState = await Self.refusal(from: empty, to: "postgres://u@127.0.0.1:1/db")
        #expect(noState.contains("holds no Trellis state"), "\(noState)")
        let same = await Self.refusal(from: empty, to: empty)
        #expect(same.contains("--from and --to name the same state"), "\(same)")
        let state = temporaryDirectory()
        try await Self.makeState(in: state)
        let unreachable = await Self.refusal(from: state, to: "postgres://u:secret@127.0.0.1:1/db")
        #expect(unreachable.contains("cannot connect"), "\(unreachable)")
        #expect(!unreachable.contains("secret"))
    }

    @Test("catalog import --store writes the species into PostgreSQL")
    func catalogImport() async throws {
        let csv = MarkdownDocument.repositoryRoot.appendingPathComponent("catalog/usda-starter.csv").path
        try await PostgresTestServer.withDatabase { url in
            // The command itself, run in-process as the binary runs it.
            var command = try #require(
                try TrellisCommand.parseAsRoot(["catalog", "import", csv, "--store", url.urlWithPassword])
                    as? CatalogCommand.Import)
            try await command.run()
            let store = try await PostgresStore.connect(url, owner: "checker")
            #expect(try await store.speciesCount() == 95)
            try await store.close()
        }
    }
}
