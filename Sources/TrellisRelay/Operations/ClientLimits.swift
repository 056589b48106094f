import Foundation
import Logging
import Metrics
import Synchronization
import TrellisCore

/// The per-client limits of one relay beyond the plant tracker's spam limit: the rate of JSON
/// requests per client and of device messages per device (token buckets, ``RateLimiter``, in
/// this relay's memory), and what every refusal of a limit leaves behind: a log line at most once
/// a minute per client (``NoticeThrottle``) and a count in `trellis_limit_refusals_total`.
///
/// The registration cap and the dead-letter quota are kept by the store, which every relay of a
/// share group sees alike. The rates are counted in each relay's memory, but shared: the broker
/// hands a client's messages to the group's relays in turn, so each of the `relays` online
/// allows its part of the rate (``RateLimit/share(among:)``) and the group about the whole.
public final class ClientLimits: Sendable {
    /// A limit, as counted and logged.
    public enum Limit: String, Sendable, CaseIterable {
        /// ``RelaySettings/maxRegistrationsPerClient``.
        case registrations
        /// ``RelaySettings/requestRate``.
        case requests
        /// ``RelaySettings/deviceMessageRate``.
        case deviceMessages = "device_messages"
    }

    private struct State {
        var requests: RateLimiter?
        var devices: RateLimiter?
        var notices = NoticeThrottle()
        /// The relays of the share group online, this one included (1 outside a group).
        var relays = 1
    }

    private let state = Mutex(State())
    private let refusals: [Limit: Counter]

    public init() {
        refusals = Dictionary(
            uniqueKeysWithValues: Limit.allCases.map {
                ($0, Counter(label: "trellis_limit_refusals_total", dimensions: [("limit", $0.rawValue)]))
            })
    }

    /// The relays of the share group online now, this one included: each relay's part of a rate
    /// follows (the buckets start full again when it changes, which happens as relays come and go).
    public func shareRates(among relays: Int) {
        state.withLock { $0.relays = max(1, relays) }
    }

    /// Counts one JSON request of `client` (nil: the shared topics, one allowance for all) against
    /// this relay's part of `limit`.
    public func admitRequest(client: String?, at now: Date, limit: RateLimit) -> RateVerdict {
        guard limit.isOn else { return .allowed }
        return state.withLock { state in
            let part = limit.share(among: state.relays)
            if state.requests?.limit != part { state.requests = RateLimiter(part) }
            return state.requests!.admit(client ?? "", at: now)
        }
    }

    /// Counts one message of `device` against this relay's part of `limit`.
    public func admitDeviceMessage(device: String, at now: Date, limit: RateLimit) -> RateVerdict {
        guard limit.isOn else { return .allowed }
        return state.withLock { state in
            let part = limit.share(among: state.relays)
            if state.devices?.limit != part { state.devices = RateLimiter(part) }
            return state.devices!.admit(device, at: now)
        }
    }

    /// Records a refusal of `limit` for `client`: counted always, logged when that client's last
    /// line of this limit is a minute old, with the refusals passed over since.
    public func refused(_ limit: Limit, client: String, at now: Date, logger: Logger, detail: String) {
        refusals[limit]?.increment()
        let suppressed = state.withLock { $0.notices.notice("\(limit.rawValue) \(client)", at: now) }
        guard let suppressed else { return }
        var metadata: Logger.Metadata = [
            "limit": "\(limit.rawValue)", "client": "\(client.isEmpty ? "(shared topics)" : client)"
        ]
        if suppressed > 0 { metadata["refused_since_last"] = "\(suppressed)" }
        logger.notice("client over its limit: \(detail)", metadata: metadata)
    }
}
