import TrellisMQTTTypes

/// The QoS of what Trellis publishes for a reader to see (answers, fan-out, commands, dead letters):
/// the one place it is decided. Retained states are published at QoS 1, where a copy replaces itself.
///
/// QoS 1, at least once, on Trellis's own leg too. When its connection to the broker drops after a
/// PUBLISH went out but before its PUBACK came back (a paused process, a cut cable), libmosquitto
/// sends the message again on the next connection, and the broker, which cannot tell that copy from
/// a new message, delivers both: a reader may see an answer twice (`ResendTests` shows it on a real
/// Mosquitto). QoS 2 would stop that copy, but Mosquitto hands a QoS 2 message on only when the
/// sender releases it (PUBREL): a relay that stops (it writes its DISCONNECT without reading the
/// broker's PUBREC) or is killed between its answer and the release leaves that answer undelivered,
/// while the request was acknowledged. A lost answer is worse than a repeated one, which a
/// requester matching answers by request ID drops; so QoS 1 until the client completes its QoS 2
/// exchanges before it disconnects (docs/reliability.md). A broker that takes no QoS 2 (`max_qos 1`)
/// would get QoS 1 from ``MQTTClient`` anyway.
public enum PublishQoS {
    /// A message each reader should see: an answer, a press fanned out, a command, a dead letter.
    public static let delivered: QoS = .atLeastOnce

    /// The answer to a request sent at `request`: a QoS 0 request asked for no guarantee and its
    /// answer gets none; any other is answered at ``delivered``.
    public static func answer(to request: QoS) -> QoS {
        request == .atMostOnce ? .atMostOnce : delivered
    }
}
