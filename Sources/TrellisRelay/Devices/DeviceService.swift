import Foundation
import TrellisCore
import TrellisMQTTTypes
import TrellisStore

/// The device fleet: what devices publish (`devices/<id>/status|telemetry|log`) keeps the
/// registry and the logs; the `devices`, `models` and `logs` JSON services manage it. Trellis
/// publishes the retained `devices/<id>/info` and `trellis/models/<id>/info`, commands on
/// `devices/<id>/command` and every log entry on `trellis/logs/<id>`.
public struct DeviceService: Sendable {
    let settings: RelaySettings

    public init(settings: RelaySettings) {
        self.settings = settings
    }

    /// This service's entries of the routing table.
    public var routes: [Route] {
        let routes = [
            Route(
                TopicPattern.deviceStatus.filter(prefixes), service: "devices",
                handler: ClosureHandler { message, context in
                    if let refusal = overRate(message, device: context.captures[0], context: context) { return refusal }
                    return await status(message, device: context.captures[0], context: context)
                }),
            Route(
                TopicPattern.deviceTelemetry.filter(prefixes), service: "devices",
                handler: ClosureHandler { message, context in
                    if let refusal = overRate(message, device: context.captures[0], context: context) { return refusal }
                    return await telemetry(message, device: context.captures[0], context: context)
                }),
            Route(
                TopicPattern.deviceLog.filter(prefixes), service: "devices",
                handler: ClosureHandler { message, context in
                    if let refusal = overRate(message, device: context.captures[0], context: context) { return refusal }
                    return await log(message, device: context.captures[0], context: context)
                })
        ]
        return routes
            + JSONService.routes(of: FleetRequest.actions, limits: limits, settings: settings) { [self] request, call in
                await perform(request, call: call)
            }
    }

    var prefixes: TopicPrefixes { settings.topicPrefixes }

    var limits: FleetLimits { FleetLimits(logEntries: settings.deviceLogLimit, codeBytes: settings.maxCodeBytes) }

    // MARK: What devices publish

    /// Nil while `device` keeps within ``RelaySettings/deviceMessageRate``; else what its message
    /// calls for: the first refusal of a run is dead-lettered (`rate_limited`), so an operator
    /// sees it, and later ones are dropped with nothing written. Each is counted and logged at
    /// most once a minute per device.
    func overRate(_ message: MQTTMessage, device: String, context: HandlerContext) -> HandlerOutput? {
        let rate = settings.deviceMessageRate
        guard
            case let .refused(first, _) = context.limits.admitDeviceMessage(
                device: device, at: context.now, limit: rate)
        else {
            return nil
        }
        context.limits.refused(
            .deviceMessages, client: device, at: context.now, logger: context.logger,
            detail: "more than \(rate.burst) device messages at once or \(rate.rate) a second")
        return first ? .reject(message, reason: "rate_limited", at: context.now) : HandlerOutput.none
    }

    /// `online` / `offline`: the powerstate, a `Status` log entry when it changes.
    func status(_ message: MQTTMessage, device id: String, context: HandlerContext) async -> HandlerOutput {
        guard DeviceIdentifier.isValid(id) else {
            return .reject(message, reason: "invalid_device_id", at: context.now)
        }
        guard let powerstate = Powerstate(payload: message.payload) else {
            return .reject(message, reason: "invalid_status", at: context.now)
        }
        do {
            let update = try await context.store.recordDeviceStatus(
                id: id, powerstate: powerstate,
                maxDevices: settings.maxDevices, at: context.now)
            guard let device = update.device else {
                return .reject(message, reason: "device_limit_reached", at: context.now)
            }
            guard update.changed else { return .none }
            var output = HandlerOutput(publishes: [info(device)])
            output.publish(try await logStatus(powerstate.rawValue, device: id, context: context))
            return output
        } catch {
            context.logger.error("could not store the status of device \(id): \(error)")
            return .reject(message, reason: "store_error", at: context.now)
        }
    }

    /// `rssi`, `agent_id`, `agent_status`.
    func telemetry(_ message: MQTTMessage, device id: String, context: HandlerContext) async -> HandlerOutput {
        guard DeviceIdentifier.isValid(id) else {
            return .reject(message, reason: "invalid_device_id", at: context.now)
        }
        let telemetry: DeviceTelemetry
        switch DeviceTelemetry.parse(message.payload) {
        case let .failure(rejection): return .reject(message, reason: rejection.rawValue, at: context.now)
        case let .success(parsed): telemetry = parsed
        }
        do {
            let update = try await context.store.recordTelemetry(
                id: id, telemetry: telemetry,
                maxDevices: settings.maxDevices, at: context.now)
            guard let device = update.device else {
                return .reject(message, reason: "device_limit_reached", at: context.now)
            }
            return update.changed ? HandlerOutput(publishes: [info(device)]) : .none
        } catch {
            context.logger.error("could not store the telemetry of device \(id): \(error)")
            return .reject(message, reason: "store_error", at: context.now)
        }
    }

    /// A log line: stored (written behind, the newest `deviceLogLimit` kept) and streamed.
    func log(_ message: MQTTMessage, device id: String, context: HandlerContext) async -> HandlerOutput {
        guard DeviceIdentifier.isValid(id) else {
            return .reject(message, reason: "invalid_device_id", at: context.now)
        }
        // A retained line would be logged again every time Trellis subscribes.
        if message.retain { return .reject(message, reason: "retained_log", at: context.now) }
        let entry: DeviceLogEntry
        switch DeviceLogEntry.parse(message.payload, receivedAt: context.now) {
        case let .failure(rejection): return .reject(message, reason: rejection.rawValue, at: context.now)
        case let .success(parsed): entry = parsed
        }
        // A line dated ahead of the clock would stay the newest of the device's log for ever.
        guard settings.futureTimes.admits(entry.timestamp, now: context.now) else {
            return .reject(message, reason: FutureTimeLimit.reason, at: context.now)
        }
        do {
            var output = HandlerOutput()
            if try await context.store.device(id: id) == nil {
                let update = try await context.store.registerDevice(
                    id: id, maxDevices: settings.maxDevices, at: context.now)
                guard let device = update.device else {
                    return .reject(message, reason: "device_limit_reached", at: context.now)
                }
                if update.registered { output.publish(info(device)) }
            }
            output.publish(try await append(entry, device: id, context: context))
            return output
        } catch {
            context.logger.error("could not store a log line of device \(id): \(error)")
            return .reject(message, reason: "store_error", at: context.now)
        }
    }

    // MARK: What Trellis publishes

    /// The retained `devices/<id>/info`.
    func info(_ device: DeviceRecord) -> MQTTMessage {
        MQTTMessage(
            topic: TopicPattern.deviceInfo.topic(device.id, prefixes), payload: DevicePayloads.info(device),
            qos: .atLeastOnce, retain: true)
    }

    /// Clears a forgotten device's retained info.
    func clearInfo(device id: String) -> MQTTMessage {
        MQTTMessage(topic: TopicPattern.deviceInfo.topic(id, prefixes), payload: [], qos: .atLeastOnce, retain: true)
    }

    /// The retained `trellis/models/<id>/info`.
    func modelInfo(_ model: ModelRecord) -> MQTTMessage {
        MQTTMessage(
            topic: TopicPattern.modelInfo.topic(model.id, prefixes), payload: DevicePayloads.modelInfo(model),
            qos: .atLeastOnce, retain: true)
    }

    /// Clears a deleted model's retained info.
    func clearModelInfo(model id: String) -> MQTTMessage {
        MQTTMessage(topic: TopicPattern.modelInfo.topic(id, prefixes), payload: [], qos: .atLeastOnce, retain: true)
    }

    /// A command on `devices/<id>/command`, QoS 1, never retained.
    func command(_ payload: [UInt8], device id: String) -> MQTTMessage {
        MQTTMessage(topic: TopicPattern.deviceCommand.topic(id, prefixes), payload: payload, qos: PublishQoS.delivered)
    }

    /// Stores `entry` and returns its message on `trellis/logs/<id>`.
    func append(_ entry: DeviceLogEntry, device id: String, context: HandlerContext) async throws -> MQTTMessage {
        try await context.store.appendDeviceLog(device: id, entry: entry, limit: settings.deviceLogLimit)
        return MQTTMessage(topic: "\(settings.trellisPrefix)/logs/\(id)", payload: DevicePayloads.logEntry(entry))
    }

    /// A `Status` entry Trellis writes into a device's log.
    func logStatus(_ text: String, device id: String, context: HandlerContext) async throws -> MQTTMessage {
        try await append(.status(text, at: context.now), device: id, context: context)
    }
}
