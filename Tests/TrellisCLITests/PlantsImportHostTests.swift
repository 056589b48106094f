import Foundation
import Testing
import TrellisStore
import TrellisStoreSQLite
import TrellisStorePostgres
import TrellisTestSupport
import TrellisApplication

/// `trellis plants import-host`: a household moving from the original `host.py` to Trellis.
///
/// host.py cannot be fetched at test time, so the tests write its `userdata/<phone>.json` files as
/// its `REQ_addNewPlant` writes them (`Python Files/host.py` of JonathanUhler/Plant-Tracker 1.0.0):
///
///     userdata = msg["payload"].split("--")
///     plants.append({
///         "Name"      :   userdata[0],
///         "Sensors"   :   userdata[1]
///     })
///     with open(userpath, "w") as outfile:
///         json.dump(plants, outfile)
///
/// `json.dump` with its defaults: `", "` and `": "` between items, every non-ASCII character as
/// `\uXXXX`, no line break at the end. `userdata[1]` is what the app sent after `--`, Swift's
/// description of its array of typed sensors, `["0x36", "37"]`. ``hostPyFiles`` holds two files
/// that host.py itself wrote here, run with paho-mqtt 1.6.1 against a local Mosquitto after the
/// adds below; ``writtenLikeHostPy()`` checks the writer makes them byte for byte.
@Suite("trellis plants import-host")
struct PlantsImportHostTests {
    /// Bytes host.py wrote for two phones: alice added Fern `["0x36", "37"]` and Basil
    /// `["0x38"]`; bob added Fern `["37", "0x36"]`, Mint `["0x39", "0x3A"]` and Thé `["3b"]`.
    static let hostPyFiles = [
        "alice": #"[{"Name": "Fern", "Sensors": "[\"0x36\", \"37\"]"}, {"Name": "Basil", "Sensors": "[\"0x38\"]"}]"#,
        "bob":
            #"[{"Name": "Fern", "Sensors": "[\"37\", \"0x36\"]"}, {"Name": "Mint", "Sensors": "[\"0x39\", \"0x3A\"]"}, {"Name": "Th\u00e9", "Sensors": "[\"3b\"]"}]"#
    ]

    /// The phones' adds, as the app sends them: a name and the sensors as typed.
    static let adds: [String: [(String, [String])]] = [
        "alice": [("Fern", ["0x36", "37"]), ("Basil", ["0x38"])],
        "bob": [("Fern", ["37", "0x36"]), ("Mint", ["0x39", "0x3A"]), ("Thé", ["3b"])]
    ]

    /// A phone's file as host.py's `json.dump(plants, outfile)` writes it.
    static func hostPyFile(_ plants: [(String, [String])]) -> String {
        let entries = plants.map { name, typed in
            let sensors = "[" + typed.map { "\"\($0)\"" }.joined(separator: ", ") + "]"
            return "{\(pythonJSON("Name")): \(pythonJSON(name)), \(pythonJSON("Sensors")): \(pythonJSON(sensors))}"
        }
        return "[" + entries.joined(separator: ", ") + "]"
    }

    /// A string as Python's `json.dumps` writes it with `ensure_ascii=True`.
    static func pythonJSON(_ text: String) -> String {
        var out = "\""
        for unit in text.utf16 {
            switch unit {
            case 0x22: out += "\\\""
            case 0x5C: out += "\\\\"
            case 0x0A: out += "\\n"
            case 0x0D: out += "\\r"
            case 0x09: out += "\\t"
            case 0x08: out += "\\b"
            case 0x0C: out += "\\f"
            case 0x20..<0x7F: out.unicodeScalars.append(Unicode.Scalar(UInt8(unit)))
            default: out += "\\u" + String(format: "%04x", unit)
            }
        }
        return out + "\""
    }

    @Test("the files the tests write are those host.py wrote, byte for byte")
    func writtenLikeHostPy() {
        for (phone, plants) in Self.adds {
            #expect(Self.hostPyFile(plants) == Self.hostPyFiles[phone], "\(phone)")
        }
    }

    /// A userdata directory with the two phones' files and `extra` more.
    static func userdata(_ extra: [String: String] = [:]) throws -> String {
        let directory = temporaryDirectory() + "/userdata"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        for (phone, plants) in adds {
            try hostPyFile(plants).write(toFile: "\(directory)/\(phone).json", atomically: true, encoding: .utf8)
        }
        for (name, text) in extra { try text.write(toFile: "\(directory)/\(name)", atomically: true, encoding: .utf8) }
        return directory
    }

    enum Where: String, CustomTestStringConvertible {
        case sqlite, postgres
        var testDescription: String { rawValue }
        static var available: [Where] { PostgresTestServer.isRequired ? [.sqlite, .postgres] : [.sqlite] }
    }

    /// Runs `body` with a state holding Basil (0x38), and its place.
    func withState(_ place: Where, _ body: (any TrellisStore, StatePlace) async throws -> Void) async throws {
        switch place {
        case .sqlite:
            let directory = temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let seed = try SQLiteStore(directory: directory)
            #expect(try await seed.addPlant(name: "Basil", sensors: ["0x38"], maxPlants: 7).plantID != nil)
            try await seed.close()
            let store = try SQLiteStore(directory: directory)
            try await body(store, .sqlite(directory: directory))
            try await store.close()
        case .postgres:
            try await PostgresTestServer.withDatabase { url in
                let store = try await PostgresStore.connect(url, owner: "test")
                #expect(try await store.addPlant(name: "Basil", sensors: ["0x38"], maxPlants: 7).plantID != nil)
                try await body(store, try StatePlace(naming: url.urlWithPassword))
                try await store.close()
            }
        }
    }

    static func plants(_ store: any TrellisStore) async throws -> [String] {
        try await store.plants().map { "\($0.name) \($0.sensors.joined(separator: " "))" }
    }

    /// What `trellis plants import-host` run on `userdata` at `place` prints, and its exit status, with the
    /// plant settings of `environment` (`TRELLIS_…`) over the defaults.
    static func importing(
        _ userdata: String, at place: StatePlace, partial: Bool = false, dryRun: Bool = false,
        environment: [String: String] = [:]
    ) async throws -> (status: Int32, output: String) {
        let settings = try await EffectiveConfiguration.load(file: nil, environment: environment)
        var lines: [String] = []
        let status = try await HostImport(directory: userdata, partial: partial, dryRun: dryRun).run(
            at: place, maxPlants: settings.int("plant.max_plants"),
            maximumNameLength: settings.int("plant.max_name_length")
        ) { lines.append($0) }
        return (status, lines.joined(separator: "\n"))
    }

    @Test(
        "two phones merge into one household; reported before, added once; a second run finds them there",
        arguments: Where.available)
    func merges(_ place: Where) async throws {
        let userdata = try Self.userdata()
        try await withState(place) { store, location in
            let dry = try await Self.importing(userdata, at: location, dryRun: true)
            #expect(dry.status == 0, "\(dry.output)")
            #expect(
                dry.output.contains("will add (3):") && dry.output.contains("already there (1):")
                    && dry.output.contains("cannot take (0):"), "\(dry.output)")
            #expect(dry.output.contains("Fern  0x36 0x37  (alice, bob)"), "\(dry.output)")
            #expect(try await Self.plants(store) == ["Basil 0x38"])

            let run = try await Self.importing(userdata, at: location)
            #expect(run.status == 0, "\(run.output)")
            #expect(run.output.contains("added 3 plants"), "\(run.output)")
            #expect(try await Self.plants(store) == ["Basil 0x38", "Fern 0x36 0x37", "Mint 0x39 0x3a", "Thé 0x3b"])

            let again = try await Self.importing(userdata, at: location)
            #expect(
                again.status == 0 && again.output.contains("already there (4):")
                    && again.output.contains("added 0 plants"), "\(again.output)")
        }
    }

    @Test("what cannot be taken is reported and nothing changes, unless --partial", arguments: Where.available)
    func refusals(_ place: Where) async throws {
        let userdata = try Self.userdata([
            "carol.json": "{not json",
            "dave.json": Self.hostPyFile([
                ("A plant name far too long", ["0x40"]), ("Mint", ["0x41"]), ("Sage", ["0x42"]), ("Ivy", ["0x43"])
            ]),
            "notes.txt": "not a phone's file"
        ])
        try await withState(place) { store, location in
            let environment = ["TRELLIS_PLANT_MAX_PLANTS": "4"]
            let refused = try await Self.importing(userdata, at: location, environment: environment)
            #expect(refused.status == 1, "\(refused.output)")
            for expected in [
                "carol.json: unreadable", "dave.json: \"A plant name far too long\": name too long",
                "\"Mint\": the phones have it with other sensors", "more plants than plant.max_plants (4)",
                "nothing changed"
            ] {
                #expect(refused.output.contains(expected), "\(expected) in \(refused.output)")
            }
            #expect(try await Self.plants(store) == ["Basil 0x38"])

            let partial = try await Self.importing(userdata, at: location, partial: true, environment: environment)
            #expect(partial.status == 0, "\(partial.output)")
            #expect(try await Self.plants(store) == ["Basil 0x38", "Fern 0x36 0x37", "Thé 0x3b", "Sage 0x42"])

            // Mint taken in the state with other sensors is named as such.
            _ = try await store.addPlant(name: "Ivy", sensors: ["0x50"], maxPlants: 10)
            let taken = try await Self.importing(userdata, at: location, dryRun: true)
            #expect(
                taken.output.contains("Ivy  0x43  (dave): the name is taken in the state with other sensors (0x50)"),
                "\(taken.output)")
        }
    }

    @Test("an SQLite state a relay runs on is refused")
    func relayRunning() async throws {
        let userdata = try Self.userdata()
        try await withTestBroker { broker in
            let state = temporaryDirectory()
            let trellis = try TrellisBinary.start(["run", "--broker", broker.address, "--state", state])
            try await trellis.waitForOutput("connected to the broker")
            let refused = try await TrellisBinary.run(["plants", "import-host", userdata, "--state", state])
            #expect(refused.status == 1)
            #expect(refused.output.contains("a relay is running on \(state)"), "\(refused.output)")
            #expect(try await trellis.terminate() == 0)
        }
    }
}
