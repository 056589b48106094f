/// Whether the store operations of the current task wait out a store outage.
///
/// A delivered message whose handling meets a failure that passes (``StoreError/isTransient``:
/// the server away, a lost connection, a busy or full database) waits for the store, unacknowledged,
/// and is answered once it is back, rather than refused: its sender gets the answer late instead
/// of never. The relay binds this around its handling of messages. Everything else that reads the
/// store — statistics for `/metrics` and `trellis/stats`, readiness checks, one-off commands — does
/// not, so it answers or fails at once and never hangs on an outage.
public enum OutageWaiting {
    @TaskLocal public static var enabled = false
}
