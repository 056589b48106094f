import Foundation
import TrellisCore
import TrellisMQTTTypes

/// The rule for v5 Response Topics, failing closed: a reply goes to a request's Response Topic only
/// inside the requester's own reply space (``TopicAccessTable/replySpace(ofRequest:prefixes:)``);
/// otherwise it goes to the request's usual reply topic alone, and the request is recorded as a
/// dead letter `response_topic_refused` (logged, counted and kept like every dead letter).
///
/// Trellis's own account may write every topic, so an honoured Response Topic elsewhere would let
/// any client make Trellis publish a payload it partly chooses on another client's or a device's
/// topics, past the broker's ACL. The rule can be turned off (`security.restrict_response_topics:
/// false`) only where the broker has no accounts: ``check(restricting:username:)`` refuses it when
/// Trellis logs in with one.
public enum ResponseTopicPolicy {
    /// The dead letter's reason.
    public static let refusedReason = "response_topic_refused"

    /// The dead letter of `request` when it names a Response Topic the rule refuses; nil otherwise.
    public static func refusal(of request: MQTTMessage, settings: RelaySettings, at time: Date) -> DeadLetter? {
        guard refuses(request.properties.responseTopic, forRequest: request.topic, settings: settings) else {
            return nil
        }
        return DeadLetter(reason: refusedReason, topic: request.topic, payload: request.payload, receivedAt: time)
    }

    /// Whether a request on `requestTopic` names a Response Topic the rule refuses (none: no).
    static func refuses(_ responseTopic: String?, forRequest requestTopic: String, settings: RelaySettings) -> Bool {
        guard let responseTopic else { return false }
        return !settings.allowsResponseTopic(responseTopic, forRequest: requestTopic)
    }

    /// Why a configuration would leave the rule open where the broker has accounts; nil when it is
    /// safe. `username` is the account Trellis logs in with, if any.
    public static func check(restricting: Bool, username: String?) -> String? {
        guard !restricting, let username, !username.isEmpty else { return nil }
        return
            "security.restrict_response_topics is false while Trellis logs in as \(username): the broker has accounts, "
            + "and any of them could make Trellis publish on another's topics; remove the setting (or --no-secure)"
    }
}
