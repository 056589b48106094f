/// One action of the fleet's JSON services (`devices`, `models`, `logs`): a ``JSONActionSpec``
/// whose request is read into a ``FleetRequest``. The ones that change the fleet may be sent on the
/// per-client topics by operators only.
public typealias FleetAction = JSONActionSpec<FleetRequest, FleetLimits>

extension JSONActionSpec where Request == FleetRequest, Limits == FleetLimits {
    init(
        _ service: String, _ name: String, changesFleet: Bool = false,
        read: @escaping @Sendable (FleetRequestReader) throws -> FleetRequest
    ) {
        self.init(service, name, access: changesFleet ? .operators(may: "change the fleet") : .anyone) { input in
            try read(FleetRequestReader(request: input.request, limits: input.limits))
        }
    }

    /// A write: on the per-client topics only operators may send it.
    public var changesFleet: Bool { operatorOnly }
}

extension FleetRequest {
    /// Every action of each service, in the order docs/devices.md lists them: the one list the
    /// routes, the operators' rule, the `unknown_action` answer and the docs table (checked by a
    /// test) follow; what an action does is the relay's answer to the ``FleetRequest`` it returns.
    public static let actions = JSONActionList<FleetRequest, FleetLimits>([

        FleetAction("devices", "list") { request in
            try request.only(["model_id", "powerstate"])
            return .listDevices(modelID: try request.optionalString("model_id"), powerstate: try request.powerstate())
        },
        FleetAction("devices", "get") { request in
            try request.only(["id"])
            return .getDevice(id: try request.device("id"))
        },
        FleetAction("devices", "update", changesFleet: true) { request in
            try request.editable(["name", "model_id"], besides: "id")
            let update = FleetRequest.updateDevice(
                id: try request.device("id"), name: try request.nullableName("name"),
                modelID: try request.nullableModelID("model_id"))
            if case .updateDevice(_, nil, nil) = update {
                throw JSONServiceError(.invalidRequest, "nothing to change: give \"name\" or \"model_id\"")
            }
            return update
        },
        FleetAction("devices", "delete", changesFleet: true) { request in
            try request.only(["id"])
            return .deleteDevice(id: try request.device("id"))
        },
        FleetAction("devices", "restart", changesFleet: true) { request in
            try request.only(["id"])
            return .restartDevice(id: try request.device("id"))
        },
        FleetAction("models", "list") { request in
            try request.only([])
            return .listModels
        },
        FleetAction("models", "get") { request in
            try request.only(["id"])
            return .getModel(id: try request.modelID("id"))
        },
        FleetAction("models", "create", changesFleet: true) { request in
            try request.only(["name"])
            return .createModel(name: try request.name("name"))
        },
        FleetAction("models", "update", changesFleet: true) { request in
            try request.editable(["name"], besides: "id")
            return .updateModel(id: try request.modelID("id"), name: try request.name("name"))
        },
        FleetAction("models", "delete", changesFleet: true) { request in
            try request.only(["id"])
            return .deleteModel(id: try request.modelID("id"))
        },
        FleetAction("models", "assign", changesFleet: true) { request in
            try request.only(["device", "model"])
            let device = try request.device("device")
            if case .null? = request.request.members["model"] { return .assign(device: device, model: nil) }
            return .assign(device: device, model: try request.modelID("model"))
        },
        FleetAction("models", "restart", changesFleet: true) { request in
            try request.only(["id"])
            return .restartModel(id: try request.modelID("id"))
        },
        FleetAction("models", "upload", changesFleet: true) { request in
            try request.only(["model", "device_code", "agent_code"])
            let model = try request.modelID("model")
            return .upload(
                model: model, deviceCode: try request.code("device_code"), agentCode: try request.code("agent_code"))
        },
        FleetAction("models", "code") { request in
            try request.only(["model", "build"])
            let model = try request.modelID("model")
            return .code(
                model: model, build: try request.request.optionalInteger("build", in: 1...Int(Int32.max)).get())
        },
        FleetAction("models", "builds") { request in
            try request.only(["model"])
            return .builds(model: try request.modelID("model"))
        },
        FleetAction("logs", "get") { request in
            try request.only(["device", "since", "limit"])
            let device = try request.device("device")
            let since = try LogSince.parse(request.request.members["since"]).get()
            let limit = try request.request.optionalInteger("limit", in: 1...max(1, request.limits.logEntries)).get()
            return .logs(device: device, since: since, limit: limit ?? request.limits.logEntries)
        }
    ])
}
