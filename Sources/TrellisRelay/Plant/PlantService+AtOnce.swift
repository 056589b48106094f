import Foundation
import TrellisCore
import TrellisMQTTTypes
import TrellisStore

extension PlantService {
    /// The bytes a `REQ_plantSensorData` request ends with, looked for before the message is parsed.
    private static let sensorDataEnding = Array(";operation:\(PlantOperation.plantSensorData.requestTag)".utf8)

    /// Whether `payload` ends as a `REQ_plantSensorData` request does: one comparison of its last bytes.
    static func endsAsSensorDataRequest(_ payload: [UInt8]) -> Bool {
        let ending = sensorDataEnding
        guard payload.count > ending.count else { return false }
        return payload.withUnsafeBufferPointer { bytes in
            ending.withUnsafeBufferPointer { UnsafeBufferPointer(rebasing: bytes[(bytes.count - $0.count)...]).sameBytes(as: $0) }
        }
    }

    /// Answers a `REQ_plantSensorData` request without suspending, when the store holds what it
    /// needs in this process's memory: the sender's spam count and the records (SQLite's ledger and
    /// read cache, with no write waiting ahead). This is the request a dashboard repeats, so most
    /// of the plant tracker's traffic takes no async step between the message and its answer
    /// (``Route/answerAtOnce``).
    ///
    /// Nil, with nothing changed, for any other message, a store on a server, or records not held;
    /// ``handleRequest(_:client:context:)`` then handles it. It answers by the same steps as that
    /// handler (``refusalBeforeCounting(_:claimedSender:isRequest:reply:client:now:)``, the spam verdict,
    /// ``sensorAnswer(_:)``, ``rendered(_:to:operation:message:reply:now:)``), in an order that puts
    /// its one change, the sender's spam count, after everything that may still decline: the
    /// records are read before the count rather than after, which nothing between them can change.
    func answerAtOnce(_ message: MQTTMessage, client: String?, context: HandlerContext) -> HandlerOutput? {
        let store = context.store
        // A look at the operation's tag first: a request of another kind is parsed once, by the handler.
        guard !store.readsWaitOnServer, Self.endsAsSensorDataRequest(message.payload) else { return nil }
        // Taken out of the parse by a `switch` that consumes it.
        let parsed = PlantProtocol.parse(message.payload, hostName: settings.hostName)
        let request: PlantMessage
        switch consume parsed {
        case let .request(message, operation) where operation == .plantSensorData: request = message
        default: return nil
        }
        let now = context.now
        let reply = ReplyRoute(service: self, request: message, client: client)
        // A refused Response Topic leaves a dead letter, which the handler writes.
        if reply.refusesResponseTopic { return nil }
        if let refusal = refusalBeforeCounting(message, claimedSender: request.sender, isRequest: true, reply: reply,
                                               client: client, now: now) {
            return refusal
        }
        guard case let .success(.sensorData(query)) = reply.dialect.read(.plantSensorData, payload: request.payload,
                                                                          maximumNameLength: settings.maxPlantNameLength),
              let records = store.sensorRecordsAtOnce(plant: query.plantName),
              let verdict = store.admitMessageAtOnce(sender: Self.spamKey(client: client, sender: request.sender), at: now,
                                                     limit: settings.spamLimit, window: settings.spamWindow, usingAllowance: false)
        else { return nil }
        guard verdict == .allowed else {
            return refusal(of: verdict, message: message, parsed: .request(request, .plantSensorData), reply: reply, now: now)
        }
        return rendered(sensorAnswer(records), to: request, operation: .plantSensorData, message: message, reply: reply, now: now)
    }
}
