/// Plant-name rules shared by `REQ_addNewPlant`, `REQ_editPlant` and `REQ_deletePlant`.
public enum PlantName {
    /// The longest allowed name by default, in characters (grapheme clusters, so `é` or an emoji
    /// counts as one); the original host's limit. `plant.max_name_length` changes it.
    public static let maximumLength = 15

    /// Trims surrounding whitespace and checks the name.
    ///
    /// An empty (or all-whitespace) name is `ERR_missingVals`: the value is missing, which the
    /// client can fix, rather than a length problem. So is a name with a `,`, which `REQ_editPlant`
    /// uses to separate two names (a comma-separated add can never produce one; the original
    /// app's `name--[…]` add could). More than ``maximumLength`` characters is `ERR_plantNameTooLong`.
    public static func validate(_ text: some StringProtocol, maximumLength: Int = maximumLength) -> Result<
        String, PlantErrorTag
    > {
        let name = text.trimmingPlantWhitespace()
        if name.isEmpty || name.utf8.contains(0x2C) { return .failure(.missingVals) }
        if name.count > maximumLength { return .failure(.plantNameTooLong) }
        return .success(name)
    }
}

/// A decoded `REQ_addNewPlant` payload: `<name>,<sensor>[,<sensor>…]`, e.g. `Fern,0x36`.
///
/// Whether the name is taken or the plant limit is reached is decided by the store, not here.
public struct NewPlantRequest: Sendable, Equatable {
    /// The trimmed plant name, 1–15 characters.
    public var name: String
    /// Normalized sensor addresses (`0x36`), in the order given, without duplicates.
    public var sensors: [String]

    /// Parses and validates a payload.
    ///
    /// The name is everything before the first `,` (so names cannot contain commas); each sensor
    /// is trimmed and normalized with ``SensorAddress/normalize(_:)``. Errors, first failure wins:
    /// an empty name gives `ERR_missingVals`, a too-long name `ERR_plantNameTooLong`, no sensors or
    /// any invalid or empty sensor entry `ERR_invalidPlantSensorID`. A repeated sensor is kept once.
    public static func parse(_ payload: String, maximumNameLength: Int = PlantName.maximumLength) -> Result<
        NewPlantRequest, PlantErrorTag
    > {
        let parts = payload.split(separator: ",", omittingEmptySubsequences: false)
        return validate(
            name: parts[0], sensors: parts.dropFirst(), maximumNameLength: maximumNameLength,
            address: SensorAddress.normalize)
    }

    /// The checks every form of add shares, in their order: the name (``PlantName/validate(_:maximumLength:)``),
    /// then at least one sensor, each read by `address` after trimming (`ERR_invalidPlantSensorID`).
    /// A dialect only decides how the name and the sensor texts are cut out of the payload, and
    /// how an address is read.
    public static func validate(
        name rawName: some StringProtocol, sensors rawSensors: some Collection<some StringProtocol>,
        maximumNameLength: Int, address: (String) -> String?
    ) -> Result<NewPlantRequest, PlantErrorTag> {
        let name: String
        switch PlantName.validate(rawName, maximumLength: maximumNameLength) {
        case .success(let valid): name = valid
        case .failure(let tag): return .failure(tag)
        }
        guard !rawSensors.isEmpty else { return .failure(.invalidPlantSensorID) }
        var sensors: [String] = []
        for part in rawSensors {
            guard let sensor = address(part.trimmingPlantWhitespace()) else {
                return .failure(.invalidPlantSensorID)
            }
            if !sensors.contains(sensor) { sensors.append(sensor) }
        }
        return .success(NewPlantRequest(name: name, sensors: sensors))
    }
}

/// What a `REQ_plantSensorData` payload asks for.
public enum PlantSensorQuery: Sendable, Equatable {
    /// Every plant: payload `all` (the original client's only form) or an empty payload.
    case all
    /// One plant, by its trimmed name.
    case plant(String)

    /// Interprets a request payload; `all` is matched exactly after trimming.
    public init(payload: String) {
        // The usual payloads, told at once: two small strings compare as two words.
        if payload == "all" || payload.isEmpty {
            self = .all
            return
        }
        let trimmed = payload.trimmingPlantWhitespace()
        self = trimmed.isEmpty || trimmed == "all" ? .all : .plant(trimmed)
    }

    /// The plant asked for; nil for every plant.
    public var plantName: String? {
        switch self {
        case .all: nil
        case let .plant(name): name
        }
    }
}

extension StringProtocol {
    /// The text without leading and trailing whitespace and newlines.
    func trimmingPlantWhitespace() -> String {
        // Text that starts and ends with a visible ASCII character has nothing to trim: every other
        // whitespace character lies outside ASCII.
        // Its ends are read from its bytes in place: the view's generic `last` walks back through an index.
        let text = String(self)
        let ends =
            text.utf8.withContiguousStorageIfAvailable { ($0.first, $0.last) } ?? (text.utf8.first, text.utf8.last)
        if let first = ends.0, let last = ends.1, Self.isVisibleASCII(first), Self.isVisibleASCII(last) {
            return text
        }
        let scalars = unicodeScalars
        guard let start = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
            let end = scalars.lastIndex(where: { !$0.properties.isWhitespace })
        else { return "" }
        var result = ""
        result.unicodeScalars.append(contentsOf: scalars[start...end])
        return result
    }

    private static func isVisibleASCII(_ byte: UInt8) -> Bool { byte > 0x20 && byte < 0x7F }
}
