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

    /// The request's wire tag, e.g. `REQ_numPlants`.
    public var requestTag: String { rawValue }

    /// The tag of the response to this request: `RES_` followed by the request's name.
    public var responseTag: String { "RES_" + rawValue.dropFirst(4) }

    /// The bare operation name without prefix, e.g. `numPlants`; handy for metrics labels.
    public var name: String { String(rawValue.dropFirst(4)) }
}
