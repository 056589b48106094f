/// What a request asks for, read from its payload by a ``PlantDialect``.
public enum PlantRequest: Sendable, Equatable {
    /// `REQ_plantInfoOnStartup`.
    case plantInfo(PlantInfoQuery)
    /// `REQ_plantSensorData`.
    case sensorData(PlantSensorQuery)
    /// `REQ_numPlants`.
    case numPlants
    /// `REQ_addNewPlant`.
    case addPlant(NewPlantRequest)
    /// `REQ_deletePlant`, with the trimmed name.
    case deletePlant(String)
    /// `REQ_editPlant`.
    case renamePlant(PlantRename)
}

/// Which plants `REQ_plantInfoOnStartup` asks for.
public enum PlantInfoQuery: Sendable, Equatable {
    /// Every plant: an empty payload or `all`.
    case all
    /// One plant by name.
    case plant(String)
    /// One plant by its place in creation order, from 0: the original app's refresh.
    case index(Int)
}

/// A decoded `REQ_editPlant` payload, `<old>,<new>`.
public struct PlantRename: Sendable, Equatable {
    /// The plant's current name, trimmed.
    public var old: String
    /// The new name, trimmed and valid (``PlantName/validate(_:maximumLength:)``).
    public var new: String

    /// Parses `<old>,<new>`, cut at the first `,` (names cannot contain one).
    ///
    /// Errors, first failure wins: no `,` gives `ERR_missingVals`; an old name that is empty gives
    /// `ERR_cannotDeletePlant` (no plant has it); the new name is checked like an added plant's
    /// (empty or with a `,`: `ERR_missingVals`, too long: `ERR_plantNameTooLong`).
    public static func parse(_ payload: String, maximumNameLength: Int = PlantName.maximumLength) -> Result<
        PlantRename, PlantErrorTag
    > {
        guard let comma = payload.firstIndex(of: ",") else { return .failure(.missingVals) }
        let old = payload[..<comma].trimmingPlantWhitespace()
        guard !old.isEmpty else { return .failure(.cannotDeletePlant) }
        switch PlantName.validate(payload[payload.index(after: comma)...], maximumLength: maximumNameLength) {
        case let .failure(tag): return .failure(tag)
        case let .success(new): return .success(PlantRename(old: old, new: new))
        }
    }
}
