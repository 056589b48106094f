import Foundation
import Testing
import TrellisStore
import TrellisStoreSQLite
import TrellisStorePostgres
import TrellisTestSupport

/// `trellis deadletters`: the dead letters of a state, read from the store by the command line,
/// on SQLite (found by --state) and on PostgreSQL (--store).
@Suite("trellis deadletters")
struct DeadLettersCommandTests {
    /// Records three letters, oldest first, one an hour apart ending now.
    static func record(into store: any TrellisStore) async throws {
        let now = Date()
        try await store.recordDeadLetter(
            reason: "invalid_op", topic: "rpi/torpi", payload: Array("ID:1;op\n".utf8), at: now - 7200)
        try await store.recordDeadLetter(
            reason: "invalid_utf8", topic: "rpi/sensors/0x36", payload: [0xFF, 0x00], at: now - 3600)
        try await store.recordDeadLetter(
            reason: "invalid_status", topic: "devices/node7/status", payload: Array("maybe".utf8), at: now)
    }

    enum Where: String, CaseIterable, CustomTestStringConvertible {
        case sqlite, postgres
        var testDescription: String { rawValue }
        static var available: [Where] { PostgresTestServer.isRequired ? [.sqlite, .postgres] : [.sqlite] }
    }

    @Test("lists newest first, filters, pages and prints JSON", arguments: Where.available)
    func listing(_ place: Where) async throws {
        try await withState(place) { location in
            let all = try await TrellisBinary.run(["deadletters"] + location)
            #expect(all.status == 0, "\(all.output)")
            let lines = all.output.split(separator: "\n").map(String.init)
            #expect(lines.count == 3, "\(all.output)")
            #expect(lines[0].contains("invalid_status  devices/node7/status  maybe"), "\(lines)")
            #expect(lines[1].contains("invalid_utf8  rpi/sensors/0x36  base64:/wA="), "\(lines)")
            #expect(lines[2].contains("invalid_op  rpi/torpi  ID:1;op\\n"), "\(lines)")

            let byReason = try await TrellisBinary.run(["deadletters", "--reason", "invalid_op"] + location)
            #expect(
                byReason.output.split(separator: "\n").count == 1 && byReason.output.contains("rpi/torpi"),
                "\(byReason.output)")
            let byTopic = try await TrellisBinary.run(["deadletters", "--topic-prefix", "rpi/"] + location)
            #expect(
                byTopic.output.split(separator: "\n").count == 2 && !byTopic.output.contains("devices/"),
                "\(byTopic.output)")
            let recent = try await TrellisBinary.run(["deadletters", "--since", "90m"] + location)
            #expect(
                recent.output.split(separator: "\n").count == 2 && !recent.output.contains("invalid_op"),
                "\(recent.output)")

            let firstPage = try await TrellisBinary.run(["deadletters", "--limit", "1", "--json"] + location)
            #expect(firstPage.status == 0, "\(firstPage.output)")
            let object = try #require(
                try JSONSerialization.jsonObject(
                    with: Data((firstPage.output.split(separator: "\n").first ?? "").utf8)) as? [String: Any],
                "\(firstPage.output)")
            #expect(object["reason"] as? String == "invalid_status" && object["payload"] as? String == "maybe")
            let id = try #require(object["id"] as? Int)
            #expect(firstPage.output.contains("--before \(id)"), "\(firstPage.output)")
            let nextPage = try await TrellisBinary.run(
                ["deadletters", "--limit", "1", "--json", "--before", "\(id)"] + location)
            #expect(nextPage.output.contains(#""payload_base64":"/wA=""#), "\(nextPage.output)")

            let bad = try await TrellisBinary.run(["deadletters", "--since", "yesterday"] + location)
            #expect(bad.status != 0 && bad.output.contains("--since"), "\(bad.output)")
        }
    }

    @Test("a directory without a state is refused, not created")
    func noState() async throws {
        let empty = temporaryDirectory()
        let result = try await TrellisBinary.run(["deadletters", "--state", empty])
        #expect(result.status == 1)
        #expect(result.output.contains("holds no Trellis state"), "\(result.output)")
        #expect(!FileManager.default.fileExists(atPath: empty + "/trellis.sqlite"))
    }

    /// Runs `body` with the arguments that name a state holding the three letters.
    func withState(_ place: Where, _ body: ([String]) async throws -> Void) async throws {
        switch place {
        case .sqlite:
            let directory = temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let store = try SQLiteStore(directory: directory)
            try await Self.record(into: store)
            try await store.close()
            try await body(["--state", directory])
        case .postgres:
            try await PostgresTestServer.withDatabase { url in
                let store = try await PostgresStore.connect(url, owner: "test")
                try await Self.record(into: store)
                try await store.close()
                try await body(["--store", url.urlWithPassword])
            }
        }
    }
}
