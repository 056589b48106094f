/// How long a notification waits after its channel failed: doubling from 5 seconds per failed
/// attempt, at most 15 minutes, so a channel away for an hour is tried a few times an hour and a
/// short outage is over in seconds.
public enum NotificationBackoff {
    public static let first: Duration = .seconds(5)
    public static let longest: Duration = .seconds(900)

    /// The wait after the `attempts`-th failure (1 for the first).
    public static func delay(afterAttempts attempts: Int) -> Duration {
        let doublings = min(max(attempts - 1, 0), 20)
        return min(first * (1 << doublings), longest)
    }
}
