import Foundation
import TrellisCore
import TrellisMQTTTypes
import TrellisStore

/// Whether a request may be answered at all, before it is read: refused are a retained request
/// (delivered again at every subscription), a sender that does not match the per-client topic it
/// came on, an empty sender in the released app's dialect (its answer would carry an empty
/// receiver, which every app on the shared topic rejects), and a sender over the spam limit
/// (kicked once, then muted). The store keeps the spam count, so a sender spread over several
/// relays is limited once; a refresh's index reads were paid for by its `REQ_numPlants`
/// (`SpamGuard.grant`) and use its allowance. The steps that ask are ``PlantRequestSteps``'.
extension PlantService {
    /// Whom the spam limit counts a message against: on the per-client topic `rpi/torpi/<client>`
    /// the client, whom the secure profile's ACL alone lets publish there; on the shared topic the
    /// payload's `sender`. A per-client key ends with `;`, which no sender can hold (the plant
    /// protocol cuts fields on it), so a shared-topic message naming `sender:bob` never counts
    /// against the account `bob`.
    static func spamKey(client: String?, sender: String) -> String {
        guard let client else { return sender }
        return client + ";"
    }

    /// The refusals decided from the message alone, before its sender is counted: a retained
    /// request, a sender (`claimedSender`, well formed or not) that does not match its per-client
    /// topic, an empty sender of a well-formed request in the released app's dialect. Nil when none
    /// applies.
    func refusalBeforeCounting(
        _ message: MQTTMessage, claimedSender: String?, isRequest: Bool, reply: ReplyRoute,
        client: String?, now: Date
    ) -> HandlerOutput? {
        if message.retain {
            return .reject(message, reason: "retained_request", at: now)
        }
        if let client, let claimedSender, claimedSender != client {
            return .reject(message, reason: "sender_mismatch", at: now)
        }
        if reply.dialect == .original, isRequest, claimedSender?.isEmpty == true {
            return .reject(message, reason: "empty_sender", at: now)
        }
        return nil
    }

    /// What the spam ledger's `verdict` calls for: nil to go on; the `ERR_kickedForSpam` answer
    /// (and its dead letter) the first time over the limit; a dead letter alone while muted.
    func refusal(
        of verdict: SpamVerdict, message: MQTTMessage, parsed: PlantParseResult, reply: ReplyRoute,
        now: Date
    ) -> HandlerOutput? {
        switch verdict {
        case .allowed:
            return nil
        case .kicked:
            var output = HandlerOutput()
            output.deadLetters.append(
                DeadLetter(
                    reason: PlantErrorTag.kickedForSpam.rawValue, topic: message.topic,
                    payload: message.payload, receivedAt: now))
            output.publish(contentsOf: reply.messages { parsed.kickMessage(hostName: settings.hostName, dialect: $0) })
            return output
        case .muted:
            return .reject(message, reason: "spam_muted", at: now)
        }
    }
}
