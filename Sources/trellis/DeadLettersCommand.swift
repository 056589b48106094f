import TrellisApplication
import ArgumentParser
import Foundation
import Logging
import TrellisCore
import TrellisRelay
import TrellisStore

/// `trellis deadletters`: the dead letters kept in the state, read from the store (not a log),
/// newest first, filtered as `trellis/request/deadletters/list` filters them.
struct DeadLettersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "deadletters",
        abstract: "List the dead letters kept in the state, newest first.",
        discussion: """
            Reads the state store directly (SQLite, also while a relay runs on it; or PostgreSQL), found as \
            `trellis run` finds it. Each line is the time received (UTC), the reason, the topic and the payload \
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

    func run() async throws {
        let query = DeadLetterQuery(
            reason: reason, topicPrefix: topicPrefix,
            since: since.flatMap { DeadLetterSince.parse($0, now: Date()) },
            before: before, limit: limit)
        var logger = Logger(label: "trellis.deadletters")
        logger.logLevel = .warning
        let place = try await location.resolve().place
        let letters: [StoredDeadLetter]
        do {
            letters = try await place.withStore(.read, owner: "trellis-deadletters", logger: logger) { store in
                try await store.deadLetters(matching: query)
            }
        } catch let error as StateAccessError {
            throw fail("\(error)")
        } catch {
            throw fail("cannot read the dead letters: \(error)")
        }
        for letter in letters {
            print(
                json
                    ? String(decoding: JSONEnvelope.encode(DeadLetterRecord(letter)), as: UTF8.self) : Self.line(letter)
            )
        }
        // The letters before the note on standard error, also when both go to one pipe.
        fflush(nil)
        if let next = DeadLetterPage(letters, limit: limit).nextCursor {
            FileHandle.standardError.write(Data("more letters match; the next page: --before \(next)\n".utf8))
        } else if letters.isEmpty, !json {
            FileHandle.standardError.write(Data("no dead letters match in \(place.description)\n".utf8))
        }
    }

    /// One letter as a line of text.
    static func line(_ letter: StoredDeadLetter) -> String {
        "\(ISO8601Time.format(letter.receivedAt))  #\(letter.id)  \(letter.reason)  \(letter.topic)  \(shown(letter.payload))"
    }

    /// A payload as text for a terminal: control characters escaped, cut at 200 characters.
    static func shown(_ payload: [UInt8]) -> String {
        guard let text = String(validating: payload, as: UTF8.self) else {
            return "base64:" + Data(payload.prefix(150)).base64EncodedString() + (payload.count > 150 ? "…" : "")
        }
        var out = ""
        for (index, scalar) in text.unicodeScalars.enumerated() {
            if index == 200 { return out + "…" }
            switch scalar {
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                out += "\\u{" + String(scalar.value, radix: 16) + "}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out.isEmpty ? "(empty)" : out
    }
}
