/// The request operations (`REQ_` tags) Trellis answers.
///
/// Each request is answered with the matching response tag, `RES_<name>`, available as
/// ``responseTag``. Anything else in the `operation` field of an incoming message is either an
/// incoming error (`ERR_` prefix, never answered) or rejected with `ERR_invalidOpTag`.
public enum PlantOperation: String, Sendable, CaseIterable {
    /// Names and sensors of all plants, sent by a client when it first connects.
    case plantInfoOnStartup = "REQ_plantInfoOnStartup"
    /// The latest sensor readings of all plants (payload `all`) or of one named plant.
    case plantSensorData = "REQ_plantSensorData"
    /// The number of plants, answered as decimal text.
    case numPlants = "REQ_numPlants"
    /// Adds a plant; payload `<name>,<sensor>[,<sensor>…]` (see ``NewPlantRequest``).
    case addNewPlant = "REQ_addNewPlant"
    /// Deletes the plant whose (trimmed) name is the payload.
    case deletePlant = "REQ_deletePlant"
    /// Renames a plant; payload `<old>,<new>`. The plant keeps its sensors, links and alerts.
    case editPlant = "REQ_editPlant"

    /// The operation whose request tag is spelled with exactly `utf8`, if any: the parser reads the
    /// tag where it lies in the message, without making a string of it first.
    init?(utf8: UnsafeBufferPointer<UInt8>) {
        guard let found = Self.tags.first(where: { $0.tag.withUnsafeBufferPointer { $0.sameBytes(as: utf8) } }) else {
            return nil
        }
        self = found.operation
    }

    private static let tags = allCases.map { (tag: Array($0.rawValue.utf8), operation: $0) }

    /// The request's wire tag, e.g. `REQ_numPlants`.
    public var requestTag: String { rawValue }

    /// The tag of the response to this request: `RES_` followed by the request's name. Spelled
    /// out rather than built, since every reply carries it.
    public var responseTag: String {
        switch self {
        case .plantInfoOnStartup: "RES_plantInfoOnStartup"
        case .plantSensorData: "RES_plantSensorData"
        case .numPlants: "RES_numPlants"
        case .addNewPlant: "RES_addNewPlant"
        case .deletePlant: "RES_deletePlant"
        case .editPlant: "RES_editPlant"
        }
    }

    /// The bare operation name without prefix, e.g. `numPlants`; handy for metrics labels.
    public var name: String { String(rawValue.dropFirst(4)) }
}

/// The `ERR_` operation tags of the plant-tracker protocol.
///
/// Trellis sends these back to a client (as the `operation` field of an error message) when a
/// request cannot be served; clients may also send them to Trellis, which logs and counts them
/// but never answers, so that errors cannot bounce between the two ends.
public enum PlantErrorTag: String, Sendable, CaseIterable, Error {
    /// The message did not have exactly five distinct keys.
    case hashLength = "ERR_hashLength"
    /// A `key:value` piece had no `:` (a key without a value), or a required value was empty.
    case missingVals = "ERR_missingVals"
    /// A piece had more than one `:`, or a key was not one of the five known keys.
    case missingKeys = "ERR_missingKeys"
    /// The operation is not a known `REQ_` tag.
    case invalidOpTag = "ERR_invalidOpTag"
    /// The sender sent more messages than the spam limit allows; later ones are dropped for a while.
    case kickedForSpam = "ERR_kickedForSpam"
    /// Sensor data was requested but there is nothing to report (no plants, or an unknown plant).
    case noPlantDataToRequest = "ERR_noPlantDataToRequest"
    /// `REQ_addNewPlant` or `REQ_editPlant` named a new name that another plant has.
    case plantNameTaken = "ERR_plantNameTaken"
    /// `REQ_addNewPlant` gave a name longer than ``PlantName/maximumLength`` characters.
    case plantNameTooLong = "ERR_plantNameTooLong"
    /// `REQ_addNewPlant` would exceed the maximum number of plants.
    case tooManyPlants = "ERR_tooManyPlants"
    /// A sensor address was not a hex I2C address in 0x03–0x77.
    case invalidPlantSensorID = "ERR_invalidPlantSensorID"
    /// `REQ_deletePlant` or `REQ_editPlant` named a plant that does not exist.
    case cannotDeletePlant = "ERR_cannotDeletePlant"

    /// The protocol's wire tag, e.g. `ERR_hashLength`.
    public var tag: String { rawValue }
}
