extension EngineIOSession {
    /// How long a poll waits at most before a noop is answered, while an upgrade is under way: the
    /// cadence at which engine.io's own server sends a noop to the polling transport of an upgrading
    /// session.
    public static let upgradePollWait = 0.1

    /// How long a long poll of this session may wait for packets before it is answered with a noop.
    ///
    /// Otherwise half a ping timeout past the ping interval, so an idle poll returns before the
    /// client gives up on it. While an upgrade is under way, only ``upgradePollWait``: the client
    /// sends its `5` once its transport is paused, which waits for the poll it has open to complete.
    /// The noop queued at the probe completes the poll open then, but when that poll had already
    /// returned (its answer reaching the client before `3probe` did, and the client polling again at
    /// once), the next poll finds nothing queued; waiting its full time would hold the upgrade past
    /// its grace, and the session would close (``CloseReason/upgradeTimeout``) with the client's
    /// page in a reconnect.
    public var longPollWait: Double {
        upgrading ? Self.upgradePollWait : limits.pingInterval + limits.pingTimeout / 2
    }
}
