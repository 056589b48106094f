import Foundation
import TrellisCore

// Temporary: the catalog, device and browse protocols until their PostgreSQL port lands.
extension PostgresStore: TrellisStore {
    static func unported(_ function: String) -> StoreError {
        StoreError(code: .operationFailed, message: "\(function) is not implemented on PostgreSQL yet")
    }

    public func upsertSpecies(_ species: [Species]) async throws -> Int {
        throw Self.unported(#function)
    }

    public func seedCatalogIfEmpty(_ species: [Species]) async throws -> Int {
        throw Self.unported(#function)
    }

    public func speciesCount() async throws -> Int {
        throw Self.unported(#function)
    }

    public func species(symbol: String) async throws -> Species? {
        throw Self.unported(#function)
    }

    public func searchSpecies(_ search: CatalogSearch) async throws -> CatalogSearchPage {
        throw Self.unported(#function)
    }

    public func addLike(client: String, symbol: String, at: Date) async throws -> LikeOutcome {
        throw Self.unported(#function)
    }

    public func removeLike(client: String, symbol: String) async throws -> Bool {
        throw Self.unported(#function)
    }

    public func likes(client: String) async throws -> [Species] {
        throw Self.unported(#function)
    }

    public func createBoard(client: String, name: String, description: String, isPublic: Bool, maxBoards: Int, at: Date) async throws -> CreateBoardOutcome {
        throw Self.unported(#function)
    }

    public func updateBoard(client: String, id: Int64, name: String?, description: String?, isPublic: Bool?) async throws -> UpdateBoardOutcome {
        throw Self.unported(#function)
    }

    public func deleteBoard(client: String, id: Int64) async throws -> Bool {
        throw Self.unported(#function)
    }

    public func addToBoard(client: String, id: Int64, symbols: [String], maxItems: Int) async throws -> BoardAddOutcome? {
        throw Self.unported(#function)
    }

    public func removeFromBoard(client: String, id: Int64, symbols: [String]) async throws -> BoardRemoveOutcome? {
        throw Self.unported(#function)
    }

    public func boards(client: String) async throws -> [Board] {
        throw Self.unported(#function)
    }

    public func board(id: Int64, owner: String?, viewer: String) async throws -> BoardDetail? {
        throw Self.unported(#function)
    }

    public func linkPlant(plant: String, symbol: String, at: Date) async throws -> LinkOutcome {
        throw Self.unported(#function)
    }

    public func unlinkPlant(plant: String) async throws -> Bool {
        throw Self.unported(#function)
    }

    public func linkedPlants(sensor: String) async throws -> [LinkedPlant] {
        throw Self.unported(#function)
    }

    public func linkedPlant(plant: String) async throws -> LinkedPlant? {
        throw Self.unported(#function)
    }

    public func registerDevice(id: String, maxDevices: Int, at: Date) async throws -> DeviceUpdate {
        throw Self.unported(#function)
    }

    public func recordDeviceStatus(id: String, powerstate: Powerstate, maxDevices: Int, at: Date) async throws -> DeviceUpdate {
        throw Self.unported(#function)
    }

    public func recordTelemetry(id: String, telemetry: DeviceTelemetry, maxDevices: Int, at: Date) async throws -> DeviceUpdate {
        throw Self.unported(#function)
    }

    public func device(id: String) async throws -> DeviceRecord? {
        throw Self.unported(#function)
    }

    public func devices(modelID: String?, powerstate: Powerstate?) async throws -> [DeviceRecord] {
        throw Self.unported(#function)
    }

    public func updateDevice(id: String, name: String??, modelID: String??) async throws -> DeviceEdit {
        throw Self.unported(#function)
    }

    public func deleteDevice(id: String) async throws -> DeviceRecord? {
        throw Self.unported(#function)
    }

    public func appendDeviceLog(device: String, entry: DeviceLogEntry, limit: Int) async throws {
        throw Self.unported(#function)
    }

    public func deviceLog(device: String, since: Date?, limit: Int) async throws -> [DeviceLogEntry] {
        throw Self.unported(#function)
    }

    public func createModel(name: String, at: Date) async throws -> ModelRecord? {
        throw Self.unported(#function)
    }

    public func model(id: String) async throws -> ModelRecord? {
        throw Self.unported(#function)
    }

    public func models() async throws -> [ModelRecord] {
        throw Self.unported(#function)
    }

    public func renameModel(id: String, name: String) async throws -> ModelEdit {
        throw Self.unported(#function)
    }

    public func deleteModel(id: String) async throws -> [String]? {
        throw Self.unported(#function)
    }

    public func addBuild(model: String, deviceCode: String, agentCode: String, at: Date) async throws -> Int? {
        throw Self.unported(#function)
    }

    public func codeRevision(model: String, build: Int?) async throws -> CodeRevision? {
        throw Self.unported(#function)
    }

    public func builds(model: String) async throws -> [BuildSummary]? {
        throw Self.unported(#function)
    }

    public func browseRootCount() async throws -> Int {
        throw Self.unported(#function)
    }

    public func browseRoot(offset: Int, limit: Int) async throws -> [EntityRef] {
        throw Self.unported(#function)
    }

    public func updateCareAlerts(plant: String, conditions: [CareCondition], at: Date) async throws -> CareAlertUpdate {
        throw Self.unported(#function)
    }

    public func deviceCount() async throws -> Int {
        throw Self.unported(#function)
    }

    public func browseFacts(_ refs: [EntityRef], detail: Bool) async throws -> [EntityRef: BrowseFacts] {
        throw Self.unported(#function)
    }
}
