import Foundation
import TrellisCore
import TrellisMQTTTypes
import TrellisStore

/// The `devices`, `models` and `logs` actions.
extension DeviceService {
    /// Carries out one request as its action read it; a store failure answers `internal_error` and
    /// is dead-lettered as `store_error`.
    func perform(_ fleetRequest: FleetRequest, call: JSONCall) async -> JSONResult {
        do {
            return try await perform(fleetRequest, context: call.context)
        } catch {
            call.context.logger.error("\(call.service)/\(call.action) failed: \(error)")
            return .storeFailure(
                topic: "\(settings.trellisPrefix)/request/\(call.service)/\(call.action)", at: call.context.now)
        }
    }

    private func perform(_ request: FleetRequest, context: HandlerContext) async throws -> JSONResult {
        let store = context.store
        switch request {
        case let .listDevices(modelID, powerstate):
            return .ok(DeviceList(devices: try await store.devices(modelID: modelID, powerstate: powerstate)))

        case let .getDevice(id):
            guard let device = try await store.device(id: id) else { return Self.noDevice(id) }
            return .ok(device)

        case let .updateDevice(id, name, modelID):
            return try await update(device: id, name: name, modelID: modelID, context: context)

        case let .assign(device, model):
            return try await update(device: device, name: nil, modelID: .some(model), context: context)

        case let .deleteDevice(id):
            guard let device = try await store.deleteDevice(id: id) else { return Self.noDevice(id) }
            var output = HandlerOutput(publishes: [clearInfo(device: id)])
            if let model = device.modelID, let record = try await store.model(id: model) {
                output.publish(modelInfo(record))
            }
            return .ok(Deleted(deleted: id), output: output)

        case let .restartDevice(id):
            guard try await store.device(id: id) != nil else { return Self.noDevice(id) }
            return .ok(Restarted(restarted: [id]), output: try await restart([id], context: context))

        case .listModels:
            return .ok(ModelList(models: try await store.models()))

        case let .getModel(id):
            guard let model = try await store.model(id: id) else { return Self.noModel(id) }
            return .ok(model)

        case let .createModel(name):
            guard let model = try await store.createModel(name: name, at: context.now) else {
                return .error(.conflict, "a model named \"\(name)\" exists already")
            }
            return .ok(model, output: HandlerOutput(publishes: [modelInfo(model)]))

        case let .updateModel(id, name):
            switch try await store.renameModel(id: id, name: name) {
            case .notFound: return Self.noModel(id)
            case .nameTaken: return .error(.conflict, "another model is named \"\(name)\" already")
            case let .renamed(model): return .ok(model, output: HandlerOutput(publishes: [modelInfo(model)]))
            }

        case let .deleteModel(id):
            guard let devices = try await store.deleteModel(id: id) else { return Self.noModel(id) }
            var output = HandlerOutput(publishes: [clearModelInfo(model: id)])
            for device in devices {
                if let record = try await store.device(id: device) { output.publish(info(record)) }
                output.publish(
                    try await logStatus("unassigned: model \(id) was deleted", device: device, context: context))
            }
            return .ok(DeletedModel(deleted: id, unassigned: devices), output: output)

        case let .restartModel(id):
            guard let model = try await store.model(id: id) else { return Self.noModel(id) }
            return .ok(Restarted(restarted: model.devices), output: try await restart(model.devices, context: context))

        case let .upload(modelID, deviceCode, agentCode):
            guard
                let build = try await store.addBuild(
                    model: modelID, deviceCode: deviceCode, agentCode: agentCode,
                    at: context.now),
                let model = try await store.model(id: modelID)
            else { return Self.noModel(modelID) }
            var output = HandlerOutput(publishes: [modelInfo(model)])
            for device in model.devices {
                output.publish(command(DevicePayloads.codeCommand(model: model.id, build: build), device: device))
            }
            return .ok(Uploaded(build: build), output: output)

        case let .code(modelID, build):
            if let revision = try await store.codeRevision(model: modelID, build: build) { return .ok(revision) }
            guard try await store.model(id: modelID) != nil else { return Self.noModel(modelID) }
            return .error(
                .notFound, build.map { "model \(modelID) has no build \($0)" } ?? "model \(modelID) has no build yet")

        case let .builds(modelID):
            guard let builds = try await store.builds(model: modelID) else { return Self.noModel(modelID) }
            return .ok(BuildList(builds: builds, model: modelID))

        case let .logs(device, since, limit):
            guard try await store.device(id: device) != nil else { return Self.noDevice(device) }
            return .ok(LogEntries(entries: try await store.deviceLog(device: device, since: since, limit: limit)))
        }
    }

    /// A rename and/or (un)assignment: the device's info, both models' info, `Status` entries,
    /// and the `code` command when the new model has a build.
    private func update(device id: String, name: String??, modelID: String??, context: HandlerContext) async throws
        -> JSONResult
    {
        let store = context.store
        switch try await store.updateDevice(id: id, name: name, modelID: modelID) {
        case .deviceNotFound:
            return Self.noDevice(id)
        case .modelNotFound:
            return Self.noModel((modelID ?? nil) ?? "")
        case let .updated(before, after):
            var output = HandlerOutput()
            guard before != after else { return .ok(after) }
            output.publish(info(after))
            if before.name != after.name {
                let text = after.name.map { "renamed to \($0)" } ?? "name cleared"
                output.publish(try await logStatus(text, device: id, context: context))
            }
            if before.modelID != after.modelID {
                for model in [before.modelID, after.modelID].compactMap({ $0 }) {
                    if let record = try await store.model(id: model) { output.publish(modelInfo(record)) }
                }
                if let model = after.modelID {
                    output.publish(try await logStatus("assigned to model \(model)", device: id, context: context))
                    if let record = try await store.model(id: model), let build = record.latestBuild {
                        output.publish(command(DevicePayloads.codeCommand(model: model, build: build), device: id))
                    }
                } else if let model = before.modelID {
                    output.publish(try await logStatus("unassigned from model \(model)", device: id, context: context))
                }
            }
            return .ok(after, output: output)
        }
    }

    /// `restart` commands and `restart sent` entries for `devices`.
    private func restart(_ devices: [String], context: HandlerContext) async throws -> HandlerOutput {
        var output = HandlerOutput()
        for device in devices {
            output.publish(command(DevicePayloads.restartCommand(), device: device))
            output.publish(try await logStatus("restart sent", device: device, context: context))
        }
        return output
    }

    private static func noDevice(_ id: String) -> JSONResult { .error(.notFound, "there is no device \"\(id)\"") }
    private static func noModel(_ id: String) -> JSONResult { .error(.notFound, "there is no model \"\(id)\"") }
}

private struct DeviceList: Encodable, Sendable { var devices: [DeviceRecord] }
private struct ModelList: Encodable, Sendable { var models: [ModelRecord] }
private struct Deleted: Encodable, Sendable { var deleted: String }
private struct DeletedModel: Encodable, Sendable { var deleted: String; var unassigned: [String] }
private struct Restarted: Encodable, Sendable { var restarted: [String] }
private struct Uploaded: Encodable, Sendable { var build: Int }
private struct BuildList: Encodable, Sendable { var builds: [BuildSummary]; var model: String }
private struct LogEntries: Encodable, Sendable { var entries: [DeviceLogEntry] }
