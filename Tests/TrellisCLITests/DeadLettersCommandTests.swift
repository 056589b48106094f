import Foundation
import Testing
import TrellisApplication
import TrellisCore
import TrellisStore
import TrellisStoreSQLite
import TrellisStorePostgres
import TrellisTestSupport
@testable import trellis

/// `trellis deadletters`: the dead letters of a state, read from the store, on SQLite (found by
/// --state) and on PostgreSQL (--store). The listing is `DeadLetterListing`'s, run here in-process on
/// both stores with the options parsed as the command parses them; one test runs the binary.
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

        /// Runs `body` with a new state of this kind that `record` filled: its place, and the
        /// arguments that name it to a command (`--state DIRECTORY` or `--store URL`).
        func withState(
            recorded record: (any TrellisStore) async throws -> Void,
            _ body: (StatePlace, [String]) async throws -> Void
        ) async throws {
            switch self {
            case .sqlite:
                let directory = temporaryDirectory()
                defer { try? FileManager.default.removeItem(atPath: directory) }
                let store = try SQLiteStore(directory: directory)
                try await record(store)
                try await store.close()
                try await body(.sqlite(directory: directory), ["--state", directory])
            case .postgres:
                try await PostgresTestServer.withDatabase { url in
                    let store = try await PostgresStore.connect(url, owner: "test")
                    try await record(store)
                    try await store.close()
                    try await body(try StatePlace(naming: url.urlWithPassword), ["--store", url.urlWithPassword])
                }
            }
        }
    }

    /// What `trellis deadletters ARGUMENTS` prints at `place`: its lines, and its note on standard error.
    static func listed(_ arguments: [String], at place: StatePlace) async throws -> (lines: [String], note: String?) {
        let command = try DeadLettersCommand.parse(arguments)
        let letters = try await DeadLetterListing.letters(matching: command.query, at: place)
        return (
            letters.map { DeadLetterListing.text($0, json: command.json) },
            DeadLetterListing.note(letters, limit: command.limit, json: command.json, place: place)
        )
    }

    @Test("lists newest first, filters, pages and prints JSON", arguments: Where.available)
    func listing(_ place: Where) async throws {
        try await withState(place) { place in
            let all = try await Self.listed([], at: place)
            #expect(all.lines.count == 3 && all.note == nil, "\(all)")
            #expect(all.lines[0].contains("invalid_status  devices/node7/status  maybe"), "\(all.lines)")
            #expect(all.lines[1].contains("invalid_utf8  rpi/sensors/0x36  base64:/wA="), "\(all.lines)")
            #expect(all.lines[2].contains("invalid_op  rpi/torpi  ID:1;op\\n"), "\(all.lines)")

            let byReason = try await Self.listed(["--reason", "invalid_op"], at: place).lines
            #expect(byReason.count == 1 && byReason[0].contains("rpi/torpi"), "\(byReason)")
            let byTopic = try await Self.listed(["--topic-prefix", "rpi/"], at: place).lines
            #expect(byTopic.count == 2 && !byTopic.joined().contains("devices/"), "\(byTopic)")
            let recent = try await Self.listed(["--since", "90m"], at: place).lines
            #expect(recent.count == 2 && !recent.joined().contains("invalid_op"), "\(recent)")
            let none = try await Self.listed(["--reason", "nothing_like_it"], at: place)
            #expect(none.lines.isEmpty && none.note == "no dead letters match in \(place.description)")

            let firstPage = try await Self.listed(["--limit", "1", "--json"], at: place)
            let object = try #require(
                try JSONSerialization.jsonObject(with: Data((firstPage.lines.first ?? "").utf8)) as? [String: Any],
                "\(firstPage)")
            #expect(object["reason"] as? String == "invalid_status" && object["payload"] as? String == "maybe")
            let id = try #require(object["id"] as? Int)
            #expect(firstPage.note == "more letters match; the next page: --before \(id)", "\(firstPage)")
            let nextPage = try await Self.listed(["--limit", "1", "--json", "--before", "\(id)"], at: place)
            #expect(nextPage.lines.first?.contains(#""payload_base64":"/wA=""#) == true, "\(nextPage)")
        }
        do {
            _ = try DeadLettersCommand.parse(["--since", "yesterday"])
            Issue.record("--since yesterday was taken")
        } catch {
            #expect(DeadLettersCommand.message(for: error).contains("--since"))
        }
    }

    @Test("a directory without a state is refused, not created")
    func noState() async throws {
        let empty = temporaryDirectory()
        let error = await #expect(throws: CommandFailure.self) {
            try await DeadLetterListing.letters(matching: DeadLetterQuery(), at: .sqlite(directory: empty))
        }
        #expect(error?.description.contains("holds no Trellis state") == true, "\(error?.description ?? "")")
        #expect(!FileManager.default.fileExists(atPath: empty + "/trellis.sqlite"))
    }

    @Test("the binary lists a state's letters and names the next page on standard error")
    func binary() async throws {
        try await withState(.sqlite) { place in
            let listed = try await TrellisBinary.run(["deadletters", "--limit", "2", "--state", place.description])
            #expect(listed.status == 0, "\(listed.output)")
            let lines = listed.output.split(separator: "\n")
            #expect(lines.count == 3, "\(listed.output)")
            #expect(lines[0].contains("invalid_status") && lines[1].contains("invalid_utf8"), "\(listed.output)")
            #expect(lines[2].hasPrefix("more letters match; the next page: --before "), "\(listed.output)")
        }
    }

    /// Runs `body` with the place of a state holding the three letters.
    func withState(_ place: Where, _ body: (StatePlace) async throws -> Void) async throws {
        try await place.withState(recorded: Self.record) { state, _ in try await body(state) }
    }
}
