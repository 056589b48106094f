import TrellisCore

/// Remembers which broker deliveries Trellis has handled, so a redelivery after a crash is
/// recognised (see `DeliveryWindow`).
///
/// A mark must become durable in the same transaction as the state change its message caused:
/// otherwise a crash between the two either loses the mark (the message is handled twice) or
/// keeps a mark without its effect. Handlers do not pass marks around: the relay binds the mark
/// of the message in hand to ``HandledDelivery/current`` and every write a store makes while it is
/// bound, in a transaction of its own or written behind in a batch, records that mark with it.
/// A message whose handling changes nothing leaves no mark: a redelivery of it is answered again,
/// which changes nothing either.
public protocol DeliveryStore: Sendable {
    /// The marks of the last `limit` deliveries handled, oldest first.
    func recentDeliveries(limit: Int) async throws -> [DeliveryMark]
    /// Forgets every mark, once everything already queued is written: the broker started a new
    /// session, so the old packet identifiers mean nothing any more.
    func forgetDeliveries() async throws
}

/// The delivery whose message is being handled by the current task, if any.
public enum HandledDelivery {
    /// Bound by the relay around the handling of one QoS 1 or 2 message.
    @TaskLocal public static var current: DeliveryMark?
}
