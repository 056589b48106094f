import Foundation
import PostgresNIO
import TrellisCore
import TrellisStore

/// ``DeliveryStore`` and ``DeadLetterStore`` over PostgreSQL. A relay reads and forgets only its
/// own delivery marks (`owner`): the broker's packet identifiers belong to one client's session.
extension PostgresStore {
    public func recentDeliveries(limit: Int) async throws -> [DeliveryMark] {
        await commits.buffer.drain()
        let owner = self.owner
        let logger = self.logger
        return try await read("recentDeliveries(limit: \(limit))") { connection in
            var marks: [DeliveryMark] = []
            for try await (packet, fingerprint)
                in (try await connection.query(
                    """
                    SELECT packet_id, fingerprint FROM delivery WHERE owner = \(owner) ORDER BY seq DESC LIMIT \(Int64(limit))
                    """, logger: logger)).decode((Int32, Int64).self)
            {
                marks.append(DeliveryMark(packetID: Int(packet), fingerprint: UInt64(bitPattern: fingerprint)))
            }
            return marks.reversed()
        }
    }

    public func forgetDeliveries() async throws {
        await commits.buffer.drain()
        let owner = self.owner
        let logger = self.logger
        try await write("forgetDeliveries()") { connection in
            _ = try await connection.query("DELETE FROM delivery WHERE owner = \(owner)", logger: logger)
        }
    }

    public func deadLetters(limit: Int) async throws -> [StoredDeadLetter] {
        if !commits.buffer.isIdle { await commits.buffer.drain() }
        let logger = self.logger
        return try await read("deadLetters(limit: \(limit))") { connection in
            var letters: [StoredDeadLetter] = []
            for try await (id, reason, topic, payload, at)
                in (try await connection.query(
                    """
                    SELECT id, reason, topic, payload, received_at FROM dead_letter ORDER BY id DESC LIMIT \(Int64(max(0, limit)))
                    """, logger: logger)).decode((Int64, String, String, Data, Int64).self)
            {
                letters.append(
                    StoredDeadLetter(
                        id: id, reason: reason, topic: topic, payload: [UInt8](payload),
                        receivedAt: Date(storeMilliseconds: at)))
            }
            return letters
        }
    }

    /// Row counts, including queued changes while commits succeed.
    public func counts() async throws -> StoreCounts {
        if !commits.buffer.isIdle { await commits.buffer.drain(untilFailure: true) }
        let logger = self.logger
        return try await read("counts()") { connection in
            let rows = try await connection.query(
                """
                SELECT
                    (SELECT count(*) FROM plant), (SELECT count(DISTINCT sensor) FROM plant_sensor),
                    (SELECT count(*) FROM sensor_reading), (SELECT count(*) FROM button),
                    (SELECT count(*) FROM client), (SELECT count(*) FROM registration),
                    (SELECT count(*) FROM dead_letter), (SELECT count(*) FROM species),
                    (SELECT count(*) FROM device), (SELECT count(*) FROM fleet_model),
                    (SELECT count(*) FROM device_log)
                """, logger: logger)
            for try await (
                plants, sensors, readings, buttons, clients, registrations, letters, species, devices, models, logs
            )
                in rows.decode((Int64, Int64, Int64, Int64, Int64, Int64, Int64, Int64, Int64, Int64, Int64).self)
            {
                return StoreCounts(
                    plants: Int(plants), sensors: Int(sensors), sensorReadings: Int(readings), buttons: Int(buttons),
                    clients: Int(clients), registrations: Int(registrations), deadLetters: Int(letters),
                    species: Int(species), devices: Int(devices), models: Int(models), deviceLogEntries: Int(logs))
            }
            throw StoreError(code: .operationFailed, message: "counts() read no row")
        }
    }
}

/// ``SpamLedger`` over PostgreSQL: the admissions of the messages in hand go together in one call
/// of `trellis_admit_batch` (see ``PostgresAdmissions``), so every relay counts into the same window.
/// The call also reads the `plants` version, which the message's next read may use
/// (``ObservedVersions``, ``PostgresReadCache``).
extension PostgresStore {
    public func admitMessage(
        sender: String, at: Date, limit: Int, window: TimeInterval,
        usingAllowance: Bool
    ) async throws -> SpamVerdict {
        let admission = PostgresAdmissions.Admission(
            sender: sender, at: at.storeMilliseconds, limit: Int32(clamping: max(1, limit)),
            window: Int64((window * 1000).rounded()), usingAllowance: usingAllowance)
        let admitted = try await commits.direct(reportsEveryOutcome: false) {
            try commits.checkOpen("admitMessage(sender: \(sender))")
            return try await admissions.admit(admission)
        }
        ObservedVersions.current?.saw(admitted.plantsVersion, of: PostgresReadCache.plantsVersion)
        return admitted.verdict
    }

    public func grantAllowance(sender: String, count: Int) async throws {
        let logger = self.logger
        try await read("grantAllowance(sender: \(sender))") { connection in
            _ = try await connection.query(
                "UPDATE spam_sender SET allowance = \(Int32(max(0, count))) WHERE sender = \(sender)", logger: logger)
        }
    }
}

/// ``SharedLocking`` over PostgreSQL: a transaction-scoped advisory lock on the name's hash,
/// held on one pooled connection while `body` runs, released by the transaction's end.
extension PostgresStore: SharedLocking {
    public func withSharedLock<T: Sendable>(_ name: String, _ body: @escaping @Sendable () async throws -> T)
        async throws -> T
    {
        let logger = self.logger
        try commits.checkOpen("withSharedLock(\(name))")
        // The body may wait for the broker's acknowledgement (up to 10 s) while the lock is held. The lock's
        // transaction writes nothing, so a COMMIT whose answer was lost is taken as not done: the session may
        // have ended (and the lock gone) while the body ran, which then runs again under the lock.
        return try await Self.transaction(
            client, logger: logger, operation: "withSharedLock(\(name))", within: .seconds(30),
            resolving: UnresolvedCommit<T>()
        ) { connection in
            try await connection.query(
                "SELECT pg_advisory_xact_lock(hashtext('trellis'), hashtext(\(name)))", logger: logger)
            return try await body()
        }
    }
}
