import TrellisApplication
import ArgumentParser
import Foundation
import TrellisCore
import TrellisStore

/// `trellis deadletters`: the dead letters kept in the state, read from the store (not a log),
/// newest first, filtered as `trellis/request/deadletters/list` filters them.
struct DeadLettersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "deadletters",
        abstract: "List the dead letters kept in the state, newest first.",
        discussion: """
            \(StateStoreLocation.readsDirectly). Each line is the time received (UTC), the reason, the topic and the payload \
            (text, with control characters escaped, cut at 200 characters; a payload that is not UTF-8 as \
            base64:…). --json prints one JSON object per letter instead, whole: id, reason, topic, payload or \
            payload_base64, received_at, as `trellis/request/deadletters/list` answers. When more letters match \
            than --limit, the command to read the next page is printed on standard error. The store keeps the \
            newest 10,000 letters, and of each client's the newest limits.dead_letters_per_client. Exits 0 (also when none \
            match), 1 when the state cannot be read or there is none yet (an SQLite state is never made by reading it).

            Over MQTT, operators ask the same with `trellis/request/deadletters/list` (docs/operations.md).
            """
    )

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Only letters of this reason, e.g. invalid_op, spam_muted, unknown_topic.", valueName: "reason"))
    var reason: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Only letters whose topic starts with this text, e.g. rpi/ or devices/node7/.", valueName: "text"))
    var topicPrefix: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Only letters received at or after this time: ISO 8601 (2026-05-01T10:00:00Z), Unix seconds, or a span back from now (90m, 24h, 7d).",
            valueName: "time"))
    var since: String?

    @Option(
        name: .long, help: ArgumentHelp("Only letters older than the one with this id: the next page.", valueName: "id")
    )
    var before: Int64?

    @Option(name: .long, help: "The most letters listed, 1–10000 (default 20).")
    var limit = DeadLetterQuery.defaultLimit

    @Flag(name: .long, help: "One JSON object per letter, with its whole payload.")
    var json = false

    @OptionGroup var location: StateStoreLocation

    func validate() throws {
        guard (1...10_000).contains(limit) else { throw ValidationError("--limit must be from 1 to 10000") }
        if let since, DeadLetterSince.parse(since, now: Date()) == nil {
            throw ValidationError(
                "--since must be an ISO 8601 time (2026-05-01T10:00:00Z), Unix seconds, or a span such as 24h")
        }
        if let before, before <= 0 { throw ValidationError("--before must be a letter's id (a positive number)") }
    }

    /// The query the options ask, `--since` counted back from now.
    var query: DeadLetterQuery {
        DeadLetterQuery(
            reason: reason, topicPrefix: topicPrefix, since: since.flatMap { DeadLetterSince.parse($0, now: Date()) },
            before: before, limit: limit)
    }

    func run() async throws {
        let place = try await location.resolve().place
        let letters = try await DeadLetterListing.letters(matching: query, at: place)
        for letter in letters { print(DeadLetterListing.text(letter, json: json)) }
        // The letters before the note on standard error, also when both go to one pipe.
        fflush(nil)
        if let note = DeadLetterListing.note(letters, limit: limit, json: json, place: place) {
            FileHandle.standardError.write(Data((note + "\n").utf8))
        }
    }
}
