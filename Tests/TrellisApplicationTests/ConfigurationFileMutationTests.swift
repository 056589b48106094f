import Configuration
import Foundation
import Testing
import TrellisApplication
import TrellisTestSupport

/// The configuration file read as `trellis run` reads it, fed thousands of damaged variants of the
/// shipped example (bytes flipped, lines cut, repeated or swapped, keys and values replaced by
/// hostile ones, bad UTF-8, deep nesting): each is either taken with every value passing its
/// setting's check, or refused with problems that name the file or the setting; never a crash or a hang. The
/// mutations come from a fixed seed, so a failure is found again by running the test again.
@Suite("Configuration file: damaged variants of the example")
struct ConfigurationFileMutationTests {
    static let hostile: [String] = [
        "", "~", "null", "-1", "0", "99999999999999999999", "1e309", "NaN", ".inf", "\"\"", "[]", "{}", "[1, [2, [3]]]",
        "!!binary aGVsbG8=", "&a [*a]", "*undefined", "\"\\u0000\"", String(repeating: "x", count: 70_000),
        "'0.0.0.0:1883'", "\"[::]:0\"", "postgres://u:p@h/db?sslmode=disable", "%", "\u{202E}evil", "\"\\xFF\""
    ]

    static func mutate(_ lines: [String], _ random: inout SplitMix) -> [UInt8] {
        var lines = lines
        for _ in 0..<Int.random(in: 1...4, using: &random) {
            guard !lines.isEmpty else { break }
            let index = Int.random(in: 0..<lines.count, using: &random)
            switch Int.random(in: 0..<8, using: &random) {
            case 0: lines.remove(at: index)
            case 1: lines.insert(lines[index], at: index)
            case 2: lines.swapAt(index, Int.random(in: 0..<lines.count, using: &random))
            case 3:
                // The value of a `key: value` line replaced by a hostile one.
                if let colon = lines[index].firstIndex(of: ":") {
                    lines[index] = lines[index][...colon] + " " + hostile.randomElement(using: &random)!
                }
            case 4: lines[index] = String(repeating: " ", count: Int.random(in: 0...9, using: &random)) + lines[index]
            case 5:
                lines.insert(
                    (0..<Int.random(in: 1...300, using: &random)).map { String(repeating: " ", count: $0) + "k\($0):" }
                        .joined(separator: "\n"), at: index)
            case 6: lines[index] = hostile.randomElement(using: &random)! + ": " + lines[index]
            default:
                var bytes = Array(lines[index].utf8)
                if !bytes.isEmpty {
                    bytes[Int.random(in: 0..<bytes.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
                }
                lines[index] = String(decoding: bytes, as: UTF8.self)
            }
        }
        var bytes = Array(lines.joined(separator: "\n").utf8)
        if Int.random(in: 0..<20, using: &random) == 0, !bytes.isEmpty {
            bytes[Int.random(in: 0..<bytes.count, using: &random)] = 0xFF // not UTF-8
        }
        return bytes
    }

    @Test("800 damaged examples: taken with every value allowed, or refused naming the file or the setting")
    func damagedExamples() async throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let example = try String(contentsOf: root.appendingPathComponent("trellis.example.yaml"), encoding: .utf8)
        let lines = example.components(separatedBy: "\n")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("mutations-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("trellis.yaml").path
        var random = SplitMix(state: 2026_11_29)
        var taken = 0
        var refused = 0
        for round in 0..<800 {
            // Each round gives its thread up: 800 loads without a suspension would hold one of the
            // test process's few threads for seconds, starving the tests that run beside this one.
            await Task.yield()
            let bytes = Self.mutate(lines, &random)
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            let loaded: Result<EffectiveConfiguration, EffectiveConfiguration.Invalid>
            do {
                loaded = .success(try await EffectiveConfiguration.load(file: path, environment: [:]))
            } catch {
                loaded = .failure(error)
            }
            switch loaded {
            case let .success(configuration):
                taken += 1
                for setting in SettingKey.all {
                    let value = try #require(configuration.values[setting.key]?.content, "\(setting.key) unresolved")
                    #expect(
                        setting.check(value) == nil, "round \(round): \(setting.key) = \(value) taken though refused")
                }
            case let .failure(invalid):
                refused += 1
                #expect(!invalid.problems.isEmpty, "round \(round): refused without a reason")
                #expect(
                    invalid.problems.allSatisfy { problem in
                        problem.contains(path) || SettingKey.all.contains { problem.contains($0.key) }
                    }, "round \(round): a problem that names neither the file nor a setting: \(invalid.problems)")
            }
        }
        #expect(
            taken > 50 && refused > 50,
            "the mutations should both keep and break the file: \(taken) taken, \(refused) refused")
        print("configuration mutations: \(taken) taken, \(refused) refused, of 800")
    }
}
