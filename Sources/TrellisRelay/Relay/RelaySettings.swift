import TrellisCore
import TrellisMQTTTypes

/// The knobs of the relay's behaviour, with the defaults the original systems used.
public struct RelaySettings: Sendable, Hashable {
    /// The plant tracker host's name: the `sender` of every reply and the `receiver` clients address.
    public var hostName = "Host-RPI3B+"
    /// Topic prefix of the plant tracker (`rpi/torpi`, `rpi/fromrpi`, `rpi/sensors`).
    public var plantPrefix = "rpi"
    /// The dialect of the shared plant topics (`rpi/torpi` → `rpi/fromrpi`): the released iPhone
    /// app's (`original`, the default) or Trellis's lossless one. Per-client topics and v5
    /// Response Topics always get the lossless dialect.
    public var plantDialect = PlantDialect.original
    /// Topic prefix of the button service (`p2o/buttons`, `p2o/clients`).
    public var buttonPrefix = "p2o"
    /// Topic prefix of Trellis's own topics (`trellis/status`, `trellis/deadletter`).
    public var trellisPrefix = "trellis"
    /// More than `spamLimit` messages within `spamWindow` seconds from one sender is spam.
    public var spamLimit = 15
    public var spamWindow = 15.0
    /// Most buttons one client may be registered for at once (`p2o/clients/<c>/register`, Socket.IO
    /// `register`); a registration beyond is answered `failed`. Each is a row in the store.
    public var maxRegistrationsPerClient = 256
    /// JSON requests one client may send (`trellis/clients/<c>/request/…`; the shared topics,
    /// which name no client, share one allowance); beyond, `rate_limited`.
    public var requestRate = RateLimit(rate: 50, burst: 200)
    /// Messages one device may publish on `devices/<id>/status|telemetry|log`; beyond, dropped.
    public var deviceMessageRate = RateLimit(rate: 20, burst: 300)
    /// Dead letters kept per client (``DeadLetterOwner``); its older ones are evicted first, so one
    /// client never evicts another's.
    public var deadLettersPerClient = 1_000
    /// The most bytes of letters one `deadletters/list` answer carries (escaped), well under the
    /// broker's packet limit (4 MiB in broker.conf); the rest follows with `next_cursor`.
    public var deadLetterPageBytes = 1_048_576

    /// Most plants the tracker keeps.
    public var maxPlants = 7
    /// Longest plant name, in characters (`ERR_plantNameTooLong` beyond).
    public var maxPlantNameLength = 15
    /// Presses kept in each button's history.
    public var historyLimit = 20
    /// Seconds between two publications of `trellis/stats`.
    public var statsInterval = 10.0
    /// Seconds a message's own time (a press, a reading's `at`, a log line's `timestamp`) may lie
    /// ahead of the relay's clock; later ones are dead-lettered as `future_time` (``futureTimes``).
    public var maxFutureSkew: Double = FutureTimeLimit.defaultMaxSkew

    /// Where backups of an SQLite state go, on the schedule and when an operator asks
    /// (`trellis/request/store/backup`); empty: none are taken.
    public var backupDirectory = ""
    /// Seconds between two scheduled backups; 0: only when asked.
    public var backupInterval = 86_400.0
    /// Scheduled backups kept in ``backupDirectory``; older ones are removed after each new one.
    public var backupKeep = 7
    /// Seconds an operator waits between two backups asked for on `trellis/request/store/backup`,
    /// so requests cannot wear out the backup disk or crowd out the relay.
    public var backupRequestInterval = 60.0
    /// Backups asked for that are kept, apart from the scheduled ones: their own rotation, so
    /// requests never remove a scheduled backup.
    public var backupRequestKeep = 3

    /// How long the history of readings keeps each reading raw and each hour, and how many rows
    /// one sensor may keep (``HistoryService`` compacts it on that).
    public var historyRetention = HistoryRetention.standard
    /// Seconds between two compactions of the history.
    public var historyCompactionInterval = 600.0

    /// Log entries kept per device (older ones are dropped), and the most `logs/get` returns.
    public var deviceLogLimit = 200
    /// Most devices in the registry; past that, messages from unknown ids are dead-lettered.
    public var maxDevices = 100_000
    /// Largest device or agent code unit of a model build, in bytes (`too_large` beyond).
    public var maxCodeBytes = 1_048_576
    /// Clients that may change the fleet on the per-client JSON topics
    /// (`trellis/clients/<client>/request/…`); the shared topics are the operator's anyway.
    public var operators: Set<String> = []

    /// A v5 Response Topic is honoured only inside the requester's own reply space, as
    /// ``TopicAccessTable`` declares it for the request's topic, so no one can make Trellis publish
    /// where they may not. Off only where the broker has no accounts (``ResponseTopicPolicy``).
    public var restrictResponseTopics = true

    /// Home Assistant MQTT discovery: plants, buttons, fleet devices and Trellis itself appear in
    /// Home Assistant by themselves. Turning it off removes the configs this run published.
    public var homeAssistantEnabled = true
    /// The prefix Home Assistant reads discovery configs under (`homeassistant`).
    public var discoveryPrefix = "homeassistant"

    /// The share group of the relays this one splits the load with (`$share/<group>/<filter>`);
    /// nil for a relay alone on its topics.
    public var shareGroup: String?
    /// The bridges to upstream brokers: their `out` rules' topics are kept in the store for the
    /// upstream broker (``BridgeService``), which the application's forwarders send on.
    public var bridges: [BridgeSettings] = []
    /// The notification channels and rules (docs/notifications.md); none by default.
    public var notifications = NotificationPlan()
    /// This relay's MQTT client id; names its status topic when it shares the load.
    public var clientID = "trellis"
    /// The client ids of the other relays of the share group seen on `trellis/status/+`: Home
    /// Assistant's availability lists every relay's status topic, available while any is online.
    public var peerClientIDs: Set<String> = []

    /// The status topics of the share group, this relay's first (`trellis/status/+`'s filter is
    /// ``peerStatusFilter``).
    public var groupStatusTopics: [String] {
        [statusTopic] + peerClientIDs.subtracting([clientID]).sorted().map { "\(trellisPrefix)/status/\($0)" }
    }

    /// Where the relays of a share group say whether they are online; nil without a group.
    public var peerStatusFilter: String? { shareGroup == nil ? nil : "\(trellisPrefix)/status/+" }

    /// The client id whose status `topic` is, when it is a share group's status topic.
    public func peer(ofStatusTopic topic: String) -> String? {
        guard case let .peerStatus(id) = ownTopic(topic) else { return nil }
        return id
    }

    public init() {}

    /// The bound on the times messages state (``maxFutureSkew``).
    public var futureTimes: FutureTimeLimit { FutureTimeLimit(maxSkew: maxFutureSkew) }

    /// The topic prefixes, as the topic table writes them.
    public var topicPrefixes: TopicPrefixes {
        TopicPrefixes(
            plant: plantPrefix, buttons: buttonPrefix, trellis: trellisPrefix, homeAssistant: discoveryPrefix)
    }

    /// Whether a reply to a request on `requestTopic` may go to its Response Topic `responseTopic`.
    public func allowsResponseTopic(_ responseTopic: String, forRequest requestTopic: String) -> Bool {
        guard restrictResponseTopics else { return true }
        return TopicAccessTable.allowsResponseTopic(responseTopic, forRequest: requestTopic, prefixes: topicPrefixes)
    }

    /// Retained availability: `online` while Trellis runs, `offline` (its will) otherwise. A relay
    /// of a share group has its own, `trellis/status/<client id>`: the group is up while any is online.
    public var statusTopic: String {
        shareGroup == nil ? "\(trellisPrefix)/status" : "\(trellisPrefix)/status/\(clientID)"
    }

    /// What the relay asks the broker for to receive `subscription`'s messages: the filter itself,
    /// or, in a share group, `$share/<group>/<filter>` so that each message reaches one relay of the
    /// group. No Local is not allowed on a shared subscription (MQTT 5, 3.8.3.1), and nothing is
    /// lost without it: a relay never publishes on a topic it subscribes to.
    public func brokerSubscription(_ subscription: MQTTSubscription) -> MQTTSubscription {
        guard let shareGroup else { return subscription }
        return MQTTSubscription("$share/\(shareGroup)/\(subscription.filter)", qos: subscription.qos, noLocal: false)
    }
    /// Retained statistics, republished every `statsInterval` seconds.
    /// A relay of a share group has its own, `trellis/stats/<client id>`: its counters are its own.
    public var statsTopic: String {
        shareGroup == nil ? "\(trellisPrefix)/stats" : "\(trellisPrefix)/stats/\(clientID)"
    }

    /// The discovery configs of the current settings, nil while Home Assistant discovery is off.
    public var homeAssistant: HomeAssistantDiscovery? {
        homeAssistantEnabled
            ? HomeAssistantDiscovery(
                prefix: discoveryPrefix, trellisPrefix: trellisPrefix, statusTopics: groupStatusTopics)
            : nil
    }

    /// A plant's retained state (see `PlantState`), published while Home Assistant discovery is on.
    public func plantStateTopic(id: Int64) -> String { TopicPattern.plantState.topic(String(id), topicPrefixes) }

    /// Every rejected message, as JSON.
    public var deadLetterTopic: String { "\(trellisPrefix)/deadletter" }

    /// Where `trellis watch` asks for the stream of decoded traffic (``TrafficWatch``); every relay
    /// of a share group reads it (not shared), so a watcher sees them all.
    public var watchRequestTopic: String { "\(trellisPrefix)/watch/request" }

    /// Where this relay answers a watch request: that it streams, and until when.
    public var watchReplyTopic: String { "\(trellisPrefix)/watch/relays/\(clientID)" }

    /// Where the stream's events go while a watcher asks for them.
    public var watchEventsTopic: String { "\(trellisPrefix)/watch/events" }

    /// What makes the stream's and the trace's events of this relay's messages.
    public var watchDescriber: WatchDescriber {
        WatchDescriber(prefixes: topicPrefixes, deadLetterTopic: deadLetterTopic, relay: clientID)
    }
}
