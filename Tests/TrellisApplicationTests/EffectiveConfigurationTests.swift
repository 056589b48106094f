import Configuration
import Foundation
import Testing
import TrellisApplication

/// The configuration every command reads, resolved in the process: a file, overridden by
/// `TRELLIS_…` variables, overridden by flags; each value knows where it came from, and a value a
/// setting does not allow is refused with the key, its source and what is allowed.
@Suite("Effective configuration")
struct EffectiveConfigurationTests {
    static func file(_ text: String) throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("config-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("trellis.yaml").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test("precedence: the file is overridden by the environment, which is overridden by a flag")
    func precedence() async throws {
        let file = try Self.file("spam:\n  limit: 20\n  window: 5\nplant:\n  host_name: FromFile\n")
        let fileOnly = try await EffectiveConfiguration.load(file: file, environment: [:])
        #expect(fileOnly.int("spam.limit") == 20 && fileOnly.source("spam.limit") == .file)
        #expect(fileOnly.file == file)

        let environment = ["TRELLIS_SPAM_LIMIT": "30", "TRELLIS_SPAM_WINDOW": "6", "HOME": "/root"]
        let withEnvironment = try await EffectiveConfiguration.load(file: file, environment: environment)
        #expect(withEnvironment.int("spam.limit") == 30 && withEnvironment.source("spam.limit") == .environment)
        #expect(withEnvironment.double("spam.window") == 6 && withEnvironment.source("spam.window") == .environment)
        #expect(withEnvironment.string("plant.host_name") == "FromFile")
        #expect(withEnvironment.source("plant.host_name") == .file)
        #expect(withEnvironment.double("stats.interval") == 10 && withEnvironment.source("stats.interval") == .default)

        let flagged = try await EffectiveConfiguration.load(
            file: file, environment: environment, flags: ["spam.limit": .int(40)])
        #expect(flagged.int("spam.limit") == 40 && flagged.source("spam.limit") == .flag)
        #expect(flagged.source("spam.window") == .environment)
    }

    @Test("a refused flag names the flag as its source")
    func refusedFlag() async throws {
        let file = try Self.file("spam:\n  limit: 20\n")
        do {
            _ = try await EffectiveConfiguration.load(
                file: file, environment: ["TRELLIS_SPAM_LIMIT": "30"], flags: ["spam.limit": .int(0)])
            Issue.record("spam.limit = 0 was taken")
        } catch {
            #expect(error.problems.contains { $0.contains("spam.limit = 0 (from a flag) is not allowed") }, "\(error)")
        }
    }

    @Test(
        "a bad file names the key, its source and what is allowed",
        arguments: [
            ("spam:\n  limt: 3\n", "unknown key spam.limt"),
            ("spam:\n  limit: lots\n", "spam.limit (from FILE) must be an integer"),
            ("spam:\n  window: -2\n", "spam.window = -2 (from FILE) is not allowed: use a number greater than 0"),
            ("log:\n  format: xml\n", "log.format = xml (from FILE) is not allowed: use one of text, json"),
            (
                "plant:\n  dialect: modern\n",
                "plant.dialect = modern (from FILE) is not allowed: use one of original, lossless"
            ),
            (
                "broker:\n  max_unhandled: 5000\n",
                "broker.max_unhandled = 5000 (from FILE) is not allowed: use a whole number from 1 to 1024"
            ),
            (
                "broker:\n  max_packet_bytes: 100\n",
                "broker.max_packet_bytes = 100 (from FILE) is not allowed: use a whole number from 4096 to 268435455"
            ),
            // A model build carries two codes: 1.5 MiB packets do not hold two of 1 MiB.
            (
                "broker:\n  max_packet_bytes: 1572864\n",
                "broker.max_packet_bytes = 1572864 (from FILE) is too small: devices.max_code_bytes = 1048576 "
                    + "(from the default) needs packets of at least 2162688 bytes"
            ),
            (
                "devices:\n  log_limit: 0\n",
                "devices.log_limit = 0 (from FILE) is not allowed: use a whole number of at least 1"
            ),
            (
                "devices:\n  operators: \"ops,,bob\"\n",
                "devices.operators = ops,,bob (from FILE) is not allowed: use client ids separated by commas"
            ),
            // A listen address needs its port: `localhost` alone once bound the metrics server to 1883.
            (
                "metrics:\n  address: localhost\n",
                "metrics.address = localhost (from FILE) is not allowed: use HOST:PORT such as 127.0.0.1:9464"
            ),
            (
                "health:\n  address: \"127.0.0.1\"\n",
                "health.address = 127.0.0.1 (from FILE) is not allowed: use HOST:PORT"
            ),
            (
                "buttons:\n  socketio_address: \"0.0.0.0\"\n",
                "buttons.socketio_address = 0.0.0.0 (from FILE) is not allowed: use HOST:PORT"
            ),
            ("spam:\n  limit: 99999999999999999999999\n", "spam.limit (from FILE) must be an integer"),
            ("- just\n- a list\n", "FILE must be a mapping of keys")
        ])
    func badFiles(text: String, expected: String) async throws {
        let file = try Self.file(text)
        do {
            _ = try await EffectiveConfiguration.load(file: file, environment: [:])
            Issue.record("the file was taken:\n\(text)")
        } catch {
            let wanted = expected.replacingOccurrences(of: "FILE", with: file)
            #expect(error.problems.contains { $0.contains(wanted) }, "\(error.problems)")
        }
    }

    @Test("a named file that does not exist is refused, naming it")
    func missingFile() async throws {
        let path = "/nonexistent-\(UUID().uuidString)/trellis.yaml"
        do {
            _ = try await EffectiveConfiguration.load(file: path, environment: [:])
            Issue.record("a missing file was taken")
        } catch {
            #expect(error.problems.contains { $0.contains(path) }, "\(error.problems)")
        }
    }

    @Test("a file that is not UTF-8 is refused as such, not as unreadable")
    func notUTF8() async throws {
        let path = try Self.file("")
        try Data(Array("spam:\n  limit: ".utf8) + [0xFF, 0xFE, 0x0A]).write(to: URL(fileURLWithPath: path))
        do {
            _ = try await EffectiveConfiguration.load(file: path, environment: [:])
            Issue.record("a file that is not UTF-8 was taken")
        } catch {
            #expect(error.problems.contains { $0.contains("\(path) is not UTF-8 text") }, "\(error.problems)")
        }
    }
}
