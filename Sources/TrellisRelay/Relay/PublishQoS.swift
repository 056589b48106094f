import TrellisMQTTTypes

/// The QoS of what Trellis publishes: the one place it is decided.
///
/// QoS 1 is at least once on Trellis's own leg too. When its connection to the broker drops after
/// a PUBLISH went out but before its PUBACK came back (a paused process, a cut cable, a broker that
/// stopped reading), libmosquitto sends the message again on the next connection, and the broker,
/// which cannot tell that copy from a new message, delivers both. A reader would see an answer
/// twice, a press twice, a command run twice. At QoS 2 the broker keeps the packet identifier until
/// Trellis releases it and delivers the copy only once; each reader still gets the message at the
/// QoS it subscribed with. The cost is one more round trip on the loopback link per message
/// (docs/benchmark.md). A broker that takes no QoS 2 (`max_qos 1`) gets QoS 1: ``MQTTClient``
/// publishes at most at the broker's maximum.
///
/// Retained states stay at QoS 1: a copy of a retained message replaces itself.
public enum PublishQoS {
    /// A message its reader must see once: an answer, a press fanned out, a command, a dead letter.
    public static let once: QoS = .exactlyOnce

    /// A retained state: the latest replaces the last, so a copy does no harm.
    public static let retained: QoS = .atLeastOnce

    /// The answer to a request sent at `request`: a QoS 0 request asked for no guarantee and its
    /// answer gets none; any other is answered ``once``.
    public static func answer(to request: QoS) -> QoS {
        request == .atMostOnce ? .atMostOnce : once
    }
}
