import TrellisCore

/// Which records of a capture a replay feeds to Trellis.
///
/// A capture of everything that crossed the broker holds Trellis's own answers too. Those are
/// outputs, not inputs: replaying them would make Trellis see its replies as requests. So by
/// default a replay skips every record on a topic Trellis publishes to, one list derived from
/// the settings (``trellisPublications(settings:)``), and every record on a topic that an
/// earlier record named as its v5 Response Topic (the copy of a reply sent to a `mosquitto_rr`).
/// Both lists come from ``TopicAccessTable``: a topic only Trellis publishes is an output, one a
/// client publishes (a JSON request under `trellis/`, a button registration) an input.
public struct ReplaySelection: Sendable {
    /// Only records on topics matching one of these filters are replayed; all when empty.
    public var only: [TopicFilter]
    /// Replay Trellis's own publications as well.
    public var includeTrellisPublications: Bool
    /// The topics Trellis publishes to.
    public let publications: [TopicFilter]
    /// Topics under those that others publish (requests to Trellis), replayed nevertheless.
    public let requests: [TopicFilter]

    public init(
        settings: RelaySettings = RelaySettings(), only: [String] = [], includeTrellisPublications: Bool = false
    ) {
        self.only = only.map(TopicFilter.init)
        self.includeTrellisPublications = includeTrellisPublications
        self.publications = Self.trellisPublications(settings: settings).map(TopicFilter.init)
        self.requests = Self.trellisRequests(settings: settings).map(TopicFilter.init)
    }

    /// Topics others publish under the filters of ``trellisPublications(settings:)``: the JSON
    /// requests under `trellis/`, an app's button registrations beside its answers. From
    /// ``TopicAccessTable/inputs(prefixes:)``.
    public static func trellisRequests(settings: RelaySettings) -> [String] {
        TopicAccessTable.inputs(prefixes: settings.topicPrefixes)
    }

    /// Every topic filter Trellis publishes to with `settings`: the rows of ``TopicAccessTable``
    /// only Trellis publishes (its own `trellis/…` topics, the plant tracker's and the button
    /// service's replies and states, the devices' records and commands) and Home Assistant's
    /// discovery configs.
    public static func trellisPublications(settings: RelaySettings) -> [String] {
        TopicAccessTable.trellisOutputs(prefixes: settings.topicPrefixes) + ["\(settings.discoveryPrefix)/+/+/+/config"]
    }

    /// Whether Trellis published `topic`: it matches a filter of ``publications`` and no filter
    /// of ``requests``.
    public func isTrellisPublication(_ topic: String) -> Bool {
        publications.contains { $0.match(topic) != nil } && !requests.contains { $0.match(topic) != nil }
    }

    /// Why a record is left out, or nil when it is replayed.
    public enum Skip: String, Sendable {
        /// Trellis published it.
        case trellisPublication = "published by Trellis"
        /// It went to a Response Topic an earlier record named.
        case responseTopic = "a reply on a response topic"
        /// `--only` does not match it.
        case notSelected = "not matched by --only"
    }

    /// The records to replay, in order, and how many were skipped for each reason.
    public func select(_ records: [CaptureRecord]) -> (inputs: [CaptureRecord], skipped: [Skip: Int]) {
        var inputs: [CaptureRecord] = []
        var skipped: [Skip: Int] = [:]
        var responseTopics = Set<String>()
        for record in records {
            let reason = skip(record, responseTopics: responseTopics)
            // A request's reply is Trellis's output even when --only leaves the request out.
            if reason == nil || reason == .notSelected, let responseTopic = record.properties.responseTopic {
                responseTopics.insert(responseTopic)
            }
            if let reason {
                skipped[reason, default: 0] += 1
            } else {
                inputs.append(record)
            }
        }
        return (inputs, skipped)
    }

    private func skip(_ record: CaptureRecord, responseTopics: Set<String>) -> Skip? {
        if !includeTrellisPublications {
            if isTrellisPublication(record.topic) { return .trellisPublication }
            if responseTopics.contains(record.topic) { return .responseTopic }
        }
        if !only.isEmpty, !only.contains(where: { $0.match(record.topic) != nil }) { return .notSelected }
        return nil
    }
}
