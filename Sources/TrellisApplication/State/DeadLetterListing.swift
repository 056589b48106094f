import Foundation
import Logging
import TrellisCore
import TrellisRelay
import TrellisStore

/// What `trellis deadletters` lists: the letters of a state that match a query, read from the
/// store (never made by reading it), each as a line for a terminal or as the JSON object
/// `trellis/request/deadletters/list` answers with, and the note that names the next page.
package enum DeadLetterListing {
    /// The letters of the state at `place` that match `query`, newest first. A place with no state, or
    /// one that cannot be read, is a ``CommandFailure`` saying so.
    package static func letters(matching query: DeadLetterQuery, at place: StatePlace) async throws
        -> [StoredDeadLetter]
    {
        var logger = Logger(label: "trellis.deadletters")
        logger.logLevel = .warning
        do {
            return try await place.withStore(.read, owner: "trellis-deadletters", logger: logger) { store in
                try await store.deadLetters(matching: query)
            }
        } catch let error as StateAccessError {
            throw fail("\(error)")
        } catch {
            throw fail("cannot read the dead letters: \(error)")
        }
    }

    /// One letter as printed: a line of text, or with `json` its whole JSON object.
    package static func text(_ letter: StoredDeadLetter, json: Bool) -> String {
        json ? String(decoding: JSONEnvelope.encode(DeadLetterRecord(letter)), as: UTF8.self) : line(letter)
    }

    /// The note for standard error after `letters` were listed: the next page's option when more match
    /// than `limit`, or that none matched in `place` (for a text listing).
    package static func note(_ letters: [StoredDeadLetter], limit: Int, json: Bool, place: StatePlace) -> String? {
        if let next = DeadLetterPage(letters, limit: limit).nextCursor {
            return "more letters match; the next page: --before \(next)"
        }
        return letters.isEmpty && !json ? "no dead letters match in \(place.description)" : nil
    }

    /// One letter as a line of text.
    package static func line(_ letter: StoredDeadLetter) -> String {
        "\(ISO8601Time.format(letter.receivedAt))  #\(letter.id)  \(letter.reason)  \(letter.topic)  \(shown(letter.payload))"
    }

    /// A payload as text for a terminal: control characters escaped, cut at 200 characters.
    package static func shown(_ payload: [UInt8]) -> String {
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
