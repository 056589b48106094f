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
    /// `REQ_addNewPlant` named a plant that already exists.
    case plantNameTaken = "ERR_plantNameTaken"
    /// `REQ_addNewPlant` gave a name longer than ``PlantName/maximumLength`` characters.
    case plantNameTooLong = "ERR_plantNameTooLong"
    /// `REQ_addNewPlant` would exceed the maximum number of plants.
    case tooManyPlants = "ERR_tooManyPlants"
    /// A sensor address was not a hex I2C address in 0x03–0x77.
    case invalidPlantSensorID = "ERR_invalidPlantSensorID"
    /// `REQ_deletePlant` named a plant that cannot be deleted (for example, one that does not exist).
    case cannotDeletePlant = "ERR_cannotDeletePlant"

    /// The protocol's wire tag, e.g. `ERR_hashLength`.
    public var tag: String { rawValue }
}
