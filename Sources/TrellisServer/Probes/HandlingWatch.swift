import Synchronization

/// How long the message handling has gone without progress, decided from samples of the MQTT
/// client's ``TrellisMQTT/MQTTClient/consumerProgress``: a value type that takes what was seen and
/// when, and returns the stall, so the rule is tested without a relay.
///
/// The handling makes progress while it holds nothing or reports messages handled. Two samples
/// that both found messages held and the same count of handled ones mean the oldest message held at
/// the first was still held at the second: the handling has been stuck at least that long. The
/// stall is measured from the last sample that saw progress, so it never overstates; samples come
/// from the probes and the systemd watchdog, every few seconds.
struct HandlingStall: Sendable {
    private var lastHandled = 0
    private var lastHeld = 0
    private var progressAt: ContinuousClock.Instant?

    /// Takes a sample made `at`: `held` messages in hand, `handled` reported so far. Returns the
    /// time since the handling last made progress (zero when it just did).
    mutating func observe(held: Int, handled: Int, at now: ContinuousClock.Instant) -> Duration {
        defer {
            lastHandled = handled
            lastHeld = held
        }
        guard let since = progressAt, held > 0, lastHeld > 0, handled == lastHandled else {
            progressAt = now
            return .zero
        }
        return now - since
    }
}

/// ``HandlingStall`` shared by every probe and the watchdog.
final class HandlingWatch: Sendable {
    private let stall = Mutex(HandlingStall())

    /// Seconds the handling has gone without progress, given the client's progress now.
    func secondsStalled(held: Int, handled: Int, at now: ContinuousClock.Instant = .now) -> Double {
        let duration = stall.withLock { $0.observe(held: held, handled: handled, at: now) }
        return Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18
    }
}
