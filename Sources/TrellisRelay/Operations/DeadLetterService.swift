import Foundation
import TrellisCore
import TrellisMQTTTypes
import TrellisStore

/// The dead letters kept in the store, read back for operators: `deadletters/list` in the JSON
/// envelope (`trellis/request/deadletters/list`), filtered by reason, topic prefix and time, newest
/// first, a page at a time. It answers "why was my message rejected yesterday?" from the store,
/// not from a log, with the payload as it arrived.
///
/// Only operators read it: the shared topics are the operator's (in the secure profile the broker's
/// ACL gives them to the operator account alone), and on the per-client topics a client must be one
/// of `devices.operators`, since dead letters hold every client's rejected payloads.
public struct DeadLetterService: Sendable {
    let settings: RelaySettings

    public init(settings: RelaySettings) {
        self.settings = settings
    }

    /// This service's entries of the routing table.
    public var routes: [Route] {
        let list = JSONAction("list", access: .operators(may: "read dead letters")) { request, call in
            await Self.list(request, call: call)
        }
        return JSONService("deadletters", settings: settings, actions: [list]).routes
    }

    /// Answers `deadletters/list`.
    static func list(_ request: JSONRequest, call: JSONCall) async -> JSONResult {
        let query: DeadLetterQuery
        switch DeadLetterQuery.read(request, now: call.context.now) {
        case let .failure(error): return JSONResult(.error(error))
        case let .success(read): query = read
        }
        do {
            let letters = try await call.context.store.deadLetters(matching: query)
            return .ok(
                DeadLetterPage(letters, limit: query.limit, maximumBytes: call.context.settings.deadLetterPageBytes))
        } catch {
            call.context.logger.error("could not read dead letters: \(error)")
            let topic = JSONTopics(prefix: call.context.settings.trellisPrefix)
                .request(service: call.service, action: call.action, client: call.client)
            return .storeFailure(topic: topic, at: call.context.now)
        }
    }
}

/// One page of dead letters: `{"dead_letters":[…],"next_cursor":"…"}`; `next_cursor` (the id of
/// the page's last letter, as text) is null when the page is the last.
///
/// A page is cut by size as well as by count: the letters are taken while their records, as
/// written (escaped), stay within `maximumBytes`, so an answer always fits the broker's packet
/// limit however large the payloads (up to 64 KiB each, up to six times that escaped). A page cut
/// so says `"truncated":true` and carries `next_cursor` for the rest; it holds at least one letter.
public struct DeadLetterPage: Encodable, Sendable {
    public var deadLetters: [DeadLetterRecord]
    public var nextCursor: String?
    /// True when letters were left for the next page to keep within the size.
    public var truncated: Bool

    public init(_ letters: [StoredDeadLetter], limit: Int, maximumBytes: Int = .max) {
        var records: [DeadLetterRecord] = []
        var bytes = 0
        for letter in letters {
            let record = DeadLetterRecord(letter)
            if maximumBytes < .max {
                bytes += JSONEnvelope.encode(record).count + 1
                if bytes > maximumBytes, !records.isEmpty { break }
            }
            records.append(record)
        }
        deadLetters = records
        truncated = records.count < letters.count
        let full = truncated || (letters.count == limit && limit > 0)
        nextCursor = full ? records.last.map { String($0.id) } : nil
    }

    enum CodingKeys: String, CodingKey {
        case deadLetters = "dead_letters"
        case nextCursor = "next_cursor"
        case truncated
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(deadLetters, forKey: .deadLetters)
        try container.encode(nextCursor, forKey: .nextCursor)
        if truncated { try container.encode(true, forKey: .truncated) }
    }
}

/// A stored dead letter as operators read it: the record `trellis/deadletter` carried (`reason`,
/// `topic`, `payload` as text or `payload_base64`, `received_at`) with the store's `id`.
public struct DeadLetterRecord: Encodable, Sendable, Equatable {
    public var id: Int64
    public var reason: String
    public var topic: String
    public var payload: String?
    public var payloadBase64: String?
    public var receivedAt: String

    public init(_ letter: StoredDeadLetter) {
        id = letter.id
        reason = letter.reason
        topic = letter.topic
        payload = String(validating: letter.payload, as: UTF8.self)
        payloadBase64 = payload == nil ? Data(letter.payload).base64EncodedString() : nil
        receivedAt = ISO8601Time.format(letter.receivedAt)
    }

    enum CodingKeys: String, CodingKey {
        case id, reason, topic, payload
        case payloadBase64 = "payload_base64"
        case receivedAt = "received_at"
    }
}
