import TrellisCore

/// Which records of a capture a replay feeds to Trellis.
///
/// A capture of everything that crossed the broker holds Trellis's own answers too. Those are
/// outputs, not inputs: replaying them would make Trellis see its replies as requests. So by
/// default a replay skips every record on a topic Trellis publishes to, one list derived from
/// the settings (``trellisPublications(settings:)``), and every record on a topic that an
/// earlier record named as its v5 Response Topic (the copy of a reply sent to a `mosquitto_rr`).
/// JSON service requests (`trellis/request/…`, `trellis/clients/<client>/request/…`) live under
/// Trellis's prefix but are inputs, so they are replayed.
public struct ReplaySelection: Sendable {
    /// Only records on topics matching one of these filters are replayed; all when empty.
    public var only: [TopicFilter]
    /// Replay Trellis's own publications as well.
    public var includeTrellisPublications: Bool
    /// The topics Trellis publishes to.
    public let publications: [TopicFilter]
    /// Topics under those that are requests to Trellis, replayed nevertheless.
    public let requests: [TopicFilter]

    public init(settings: RelaySettings = RelaySettings(), only: [String] = [], includeTrellisPublications: Bool = false) {
        self.only = only.map(TopicFilter.init)
        self.includeTrellisPublications = includeTrellisPublications
        self.publications = Self.trellisPublications(settings: settings).map(TopicFilter.init)
        self.requests = Self.trellisRequests(settings: settings).map(TopicFilter.init)
    }

    /// The JSON service request topics, which sit under `trellisPrefix` but are inputs.
    public static func trellisRequests(settings: RelaySettings) -> [String] {
        ["\(settings.trellisPrefix)/request/#", "\(settings.trellisPrefix)/clients/+/request/#"]
    }

    /// Every topic filter Trellis publishes to with `settings`: its own `trellis/…` topics, the
    /// plant tracker's reply topics and the button service's state and client reply topics.
    public static func trellisPublications(settings: RelaySettings) -> [String] {
        let clients = "\(settings.buttonPrefix)/clients/+"
        return [
            "\(settings.trellisPrefix)/#",
            "\(settings.plantPrefix)/fromrpi",
            "\(settings.plantPrefix)/fromrpi/+",
            "\(settings.buttonPrefix)/buttons/+/state",
            "\(clients)/connection-response",
            "\(clients)/register-response",
            "\(clients)/unregister-response",
            "\(clients)/button-press",
            "devices/+/info",
            "devices/+/command",
            "\(settings.discoveryPrefix)/+/+/+/config",
        ]
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
            if publications.contains(where: { $0.match(record.topic) != nil }),
               !requests.contains(where: { $0.match(record.topic) != nil }) {
                return .trellisPublication
            }
            if responseTopics.contains(record.topic) { return .responseTopic }
        }
        if !only.isEmpty, !only.contains(where: { $0.match(record.topic) != nil }) { return .notSelected }
        return nil
    }
}
