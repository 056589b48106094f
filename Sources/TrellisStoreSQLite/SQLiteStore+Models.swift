import Foundation
import GRDB
import TrellisCore
import TrellisStore

/// Device models and their code builds, the part of ``DeviceStore`` that devices are made from:
/// every mutation is one write transaction.
extension SQLiteStore {
    public func createModel(name: String, at: Date) async throws -> ModelRecord? {
        try await write("createModel(name: \(name))") { db in
            guard
                let number = try Int64.fetchOne(
                    db,
                    sql: """
                        INSERT INTO fleet_model (name, created_at)
                        SELECT ?, ? WHERE NOT EXISTS (SELECT 1 FROM fleet_model WHERE name = ?)
                        RETURNING id
                        """, arguments: [name, at.storeMilliseconds, name])
            else { return nil }
            return ModelRecord(id: ModelIdentifier.text(number), name: name)
        }
    }

    public func model(id: String) async throws -> ModelRecord? {
        guard let number = ModelIdentifier.number(id) else { return nil }
        return try await read("model(id: \(id))") { db in try DeviceSQL.model(number, in: db) }
    }

    public func models() async throws -> [ModelRecord] {
        try await read("models()") { db in
            var devices: [Int64: [String]] = [:]
            for row in try Row.fetchAll(
                db, sql: "SELECT model_id, id FROM device WHERE model_id IS NOT NULL ORDER BY id")
            {
                devices[row["model_id"], default: []].append(row["id"])
            }
            return try Row.fetchAll(db, sql: "SELECT id, name, latest_build FROM fleet_model ORDER BY id").map { row in
                let number: Int64 = row["id"]
                let latest: Int = row["latest_build"]
                return ModelRecord(
                    id: ModelIdentifier.text(number), name: row["name"],
                    devices: devices[number] ?? [], latestBuild: latest > 0 ? latest : nil)
            }
        }
    }

    public func renameModel(id: String, name: String) async throws -> ModelEdit {
        guard let number = ModelIdentifier.number(id) else { return .notFound }
        return try await write("renameModel(id: \(id))") { db in
            try db.execute(sql: "UPDATE OR IGNORE fleet_model SET name = ? WHERE id = ?", arguments: [name, number])
            if db.changesCount > 0 { return .renamed(try DeviceSQL.model(number, in: db)!) }
            return try DeviceSQL.modelExists(number, in: db) ? .nameTaken : .notFound
        }
    }

    public func deleteModel(id: String) async throws -> [String]? {
        guard let number = ModelIdentifier.number(id) else { return nil }
        return try await write("deleteModel(id: \(id))") { db in
            let devices = try String.fetchAll(
                db, sql: "SELECT id FROM device WHERE model_id = ? ORDER BY id", arguments: [number])
            try db.execute(sql: "DELETE FROM fleet_model WHERE id = ?", arguments: [number])
            return db.changesCount > 0 ? devices : nil
        }
    }

    public func addBuild(model: String, deviceCode: String, agentCode: String, at: Date) async throws -> Int? {
        guard let number = ModelIdentifier.number(model) else { return nil }
        return try await write("addBuild(model: \(model))") { db in
            guard
                let build = try Int.fetchOne(
                    db,
                    sql: """
                        UPDATE fleet_model SET latest_build = latest_build + 1 WHERE id = ? RETURNING latest_build
                        """, arguments: [number])
            else { return nil }
            try db.execute(
                sql: """
                    INSERT INTO model_build (model_id, build, device_code, agent_code, created_at) VALUES (?, ?, ?, ?, ?)
                    """, arguments: [number, build, deviceCode, agentCode, at.storeMilliseconds])
            return build
        }
    }

    public func codeRevision(model: String, build: Int?) async throws -> CodeRevision? {
        guard let number = ModelIdentifier.number(model) else { return nil }
        return try await read("codeRevision(model: \(model))") { db in
            let row =
                if let build {
                    try Row.fetchOne(
                        db,
                        sql: """
                            SELECT build, device_code, agent_code, created_at FROM model_build WHERE model_id = ? AND build = ?
                            """, arguments: [number, build])
                } else {
                    try Row.fetchOne(
                        db,
                        sql: """
                            SELECT build, device_code, agent_code, created_at FROM model_build WHERE model_id = ?
                            ORDER BY build DESC LIMIT 1
                            """, arguments: [number])
                }
            return row.map { row in
                CodeRevision(
                    model: model, build: row["build"], deviceCode: row["device_code"],
                    agentCode: row["agent_code"], createdAt: Date(storeMilliseconds: row["created_at"]))
            }
        }
    }

    public func builds(model: String) async throws -> [BuildSummary]? {
        guard let number = ModelIdentifier.number(model) else { return nil }
        return try await read("builds(model: \(model))") { db in
            guard try DeviceSQL.modelExists(number, in: db) else { return nil }
            return try Row.fetchAll(
                db,
                sql: """
                    SELECT build, created_at FROM model_build WHERE model_id = ? ORDER BY build
                    """, arguments: [number]
            ).map { row in
                BuildSummary(build: row["build"], createdAt: Date(storeMilliseconds: row["created_at"]))
            }
        }
    }
}
