import Synchronization
import TrellisCore
import TrellisMQTTTypes
import TrellisStore

/// The relay's memory of handled QoS 1 and 2 deliveries, shared by every engine the service
/// builds (a reload keeps it), and restored from the store when the service starts.
///
/// A message the broker sends again after Trellis handled it (the acknowledgement was lost when
/// Trellis or the connection died) is dropped here instead of being counted twice.
public final class DeliveryLedger: Sendable {
    private let window: Mutex<DeliveryWindow>

    /// A ledger remembering the last `capacity` deliveries; it must exceed the receive maximum
    /// Trellis gives the broker (`MQTTConfiguration.inflightMaximum`).
    public init(capacity: Int = 4096) {
        window = Mutex(DeliveryWindow(capacity: capacity))
    }

    /// Takes the marks `store` kept from earlier runs.
    public func restore(from store: any DeliveryStore) async throws {
        let marks = try await store.recentDeliveries(limit: window.withLock { $0.capacity })
        window.withLock { $0.restore(marks) }
    }

    /// The verdict on `message`: nil when it carries no delivery (QoS 0, offline replay), so
    /// there is nothing to deduplicate.
    public func admit(_ message: MQTTMessage) -> DeliveryWindow.Verdict? {
        guard let delivery = message.delivery else { return nil }
        let mark = DeliveryMark(packetID: delivery.packetID, topic: message.topic, payload: message.payload)
        return window.withLock {
            $0.admit(mark, connection: delivery.connection, sessionResumed: delivery.sessionResumed)
        }
    }
}
