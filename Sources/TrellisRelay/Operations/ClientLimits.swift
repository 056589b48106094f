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
/// share group sees alike; the rates are each relay's own, as a client's messages on one
/// connection reach one relay of a share group at a time.
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
    }

    private let state = Mutex(State())
    private let refusals: [Limit: Counter]

    public init() {
        refusals = Dictionary(
            uniqueKeysWithValues: Limit.allCases.map {
                ($0, Counter(label: "trellis_limit_refusals_total", dimensions: [("limit", $0.rawValue)]))
            })
    }

    /// Counts one JSON request of `client` (nil: the shared topics, one allowance for all) against `limit`.
    public func admitRequest(client: String?, at now: Date, limit: RateLimit) -> RateVerdict {
        guard limit.isOn else { return .allowed }
        return state.withLock { state in
            if state.requests?.limit != limit { state.requests = RateLimiter(limit) }
            return state.requests!.admit(client ?? "", at: now)
        }
    }

    /// Counts one message of `device` against `limit`.
    public func admitDeviceMessage(device: String, at now: Date, limit: RateLimit) -> RateVerdict {
        guard limit.isOn else { return .allowed }
        return state.withLock { state in
            if state.devices?.limit != limit { state.devices = RateLimiter(limit) }
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
