import Foundation
import PostgresNIO
import TrellisCore
import TrellisStore

/// Device models and their code builds over PostgreSQL: every mutation is one transaction.
///
/// Races between relays: creating and renaming models first take a transaction-scoped advisory
/// lock (`model_names`), so the name check sees every committed model and a refused name never
/// uses up a model id (ids stay `m1`, `m2`, … as in SQLite; the unique constraint stays as the
/// last word). A build's number is the model row's `latest_build + 1`, taken by an `UPDATE …
/// RETURNING` that locks the row: two relays uploading at once get consecutive numbers. Deleting a
/// model locks its row `FOR UPDATE` before listing its devices; an edit assigning a device to it
/// holds the row `FOR KEY SHARE`, so the list returned is exactly the devices the delete unassigned.
extension PostgresStore {
    /// The advisory lock key model creations and renames take.
    static let modelNamesLock: Int64 = 0x6d6f_6465_6c73

    public func createModel(name: String, at: Date) async throws -> ModelRecord? {
        let at = at.storeMilliseconds
        let logger = self.logger
        return try await write("createModel(name: \(name))") { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(\(Self.modelNamesLock))", logger: logger)
            guard
                let number = try await connection.query(
                    """
                    INSERT INTO fleet_model (name, created_at)
                    SELECT \(name), \(at) WHERE NOT EXISTS (SELECT 1 FROM fleet_model WHERE name = \(name))
                    ON CONFLICT (name) DO NOTHING
                    RETURNING id
                    """, logger: logger
                ).decode(Int64.self).gathered().first
            else { return nil }
            return ModelRecord(id: ModelIdentifier.text(number), name: name)
        }
    }

    public func model(id: String) async throws -> ModelRecord? {
        guard let number = ModelIdentifier.number(id) else { return nil }
        let logger = self.logger
        return try await read("model(id: \(id))") { connection in
            try await PostgresDeviceSQL.model(number, on: connection, logger: logger)
        }
    }

    public func models() async throws -> [ModelRecord] {
        let logger = self.logger
        return try await read("models()") { connection in
            var devices: [Int64: [String]] = [:]
            for try await (model, id)
                in (try await connection.query(
                    "SELECT model_id, id FROM device WHERE model_id IS NOT NULL ORDER BY id", logger: logger))
                .decode((Int64, String).self)
            {
                devices[model, default: []].append(id)
            }
            var models: [ModelRecord] = []
            for try await (number, name, latest)
                in (try await connection.query(
                    "SELECT id, name, latest_build FROM fleet_model ORDER BY id", logger: logger))
                .decode((Int64, String, Int64).self)
            {
                models.append(
                    ModelRecord(
                        id: ModelIdentifier.text(number), name: name, devices: devices[number] ?? [],
                        latestBuild: latest > 0 ? Int(latest) : nil))
            }
            return models
        }
    }

    public func renameModel(id: String, name: String) async throws -> ModelEdit {
        guard let number = ModelIdentifier.number(id) else { return .notFound }
        let logger = self.logger
        return try await write("renameModel(id: \(id))") { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(\(Self.modelNamesLock))", logger: logger)
            let renamed = try await connection.query(
                """
                UPDATE fleet_model SET name = \(name)
                WHERE id = \(number) AND NOT EXISTS (SELECT 1 FROM fleet_model WHERE name = \(name) AND id <> \(number))
                RETURNING id
                """, logger: logger
            ).collect()
            if !renamed.isEmpty, let model = try await PostgresDeviceSQL.model(number, on: connection, logger: logger) {
                return .renamed(model)
            }
            return try await PostgresDeviceSQL.modelExists(number, on: connection, logger: logger)
                ? .nameTaken : .notFound
        }
    }

    public func deleteModel(id: String) async throws -> [String]? {
        guard let number = ModelIdentifier.number(id) else { return nil }
        let logger = self.logger
        return try await write("deleteModel(id: \(id))") { connection -> [String]? in
            guard
                try await !connection.query(
                    "SELECT 1 FROM fleet_model WHERE id = \(number) FOR UPDATE", logger: logger
                ).collect().isEmpty
            else {
                return nil
            }
            let devices = try await connection.query(
                "SELECT id FROM device WHERE model_id = \(number) ORDER BY id", logger: logger
            ).decode(String.self).gathered()
            try await connection.query("DELETE FROM fleet_model WHERE id = \(number)", logger: logger)
            return devices
        }
    }

    public func addBuild(model: String, deviceCode: String, agentCode: String, at: Date) async throws -> Int? {
        guard let number = ModelIdentifier.number(model) else { return nil }
        let at = at.storeMilliseconds
        let logger = self.logger
        return try await write("addBuild(model: \(model))") { connection -> Int? in
            guard
                let build = try await connection.query(
                    """
                    UPDATE fleet_model SET latest_build = latest_build + 1 WHERE id = \(number) RETURNING latest_build
                    """, logger: logger
                ).decode(Int64.self).gathered().first
            else { return nil }
            try await connection.query(
                """
                INSERT INTO model_build (model_id, build, device_code, agent_code, created_at)
                VALUES (\(number), \(build), \(deviceCode), \(agentCode), \(at))
                """, logger: logger)
            return Int(build)
        }
    }

    public func codeRevision(model: String, build: Int?) async throws -> CodeRevision? {
        guard let number = ModelIdentifier.number(model) else { return nil }
        let build = build.map(Int64.init)
        let logger = self.logger
        return try await read("codeRevision(model: \(model))") { connection in
            let rows =
                if let build {
                    try await connection.query(
                        """
                        SELECT build, device_code, agent_code, created_at FROM model_build
                        WHERE model_id = \(number) AND build = \(build)
                        """, logger: logger)
                } else {
                    try await connection.query(
                        """
                        SELECT build, device_code, agent_code, created_at FROM model_build WHERE model_id = \(number)
                        ORDER BY build DESC LIMIT 1
                        """, logger: logger)
                }
            guard let row = try await rows.decode((Int64, String, String, Int64).self).gathered().first else {
                return nil
            }
            return CodeRevision(
                model: model, build: Int(row.0), deviceCode: row.1, agentCode: row.2,
                createdAt: Date(storeMilliseconds: row.3))
        }
    }

    public func builds(model: String) async throws -> [BuildSummary]? {
        guard let number = ModelIdentifier.number(model) else { return nil }
        let logger = self.logger
        return try await read("builds(model: \(model))") { connection -> [BuildSummary]? in
            guard try await PostgresDeviceSQL.modelExists(number, on: connection, logger: logger) else { return nil }
            var builds: [BuildSummary] = []
            for try await (build, createdAt)
                in (try await connection.query(
                    "SELECT build, created_at FROM model_build WHERE model_id = \(number) ORDER BY build",
                    logger: logger))
                .decode((Int64, Int64).self)
            {
                builds.append(BuildSummary(build: Int(build), createdAt: Date(storeMilliseconds: createdAt)))
            }
            return builds
        }
    }
}
