/// How much water a species uses, as USDA PLANTS rates it ("Moisture Use").
public enum MoistureUse: String, Sendable, Hashable, CaseIterable, Codable, USDARating {
    case low = "Low"
    case medium = "Medium"
    case high = "High"
}

/// How much shade a species tolerates, as USDA PLANTS rates it ("Shade Tolerance").
public enum ShadeTolerance: String, Sendable, Hashable, CaseIterable, Codable, USDARating {
    case tolerant = "Tolerant"
    case intermediate = "Intermediate"
    case intolerant = "Intolerant"
}

/// A USDA PLANTS rating whose raw values are the words USDA writes.
public protocol USDARating: RawRepresentable<String>, CaseIterable {}

extension USDARating {
    /// Reads a USDA value or a filter value, ignoring case and surrounding spaces.
    public init?(text: String) {
        let trimmed = text.trimmingWhitespace().lowercased()
        guard let match = Self.allCases.first(where: { $0.rawValue.lowercased() == trimmed }) else { return nil }
        self = match
    }
}

/// One species of the catalog, keyed by its USDA PLANTS symbol.
///
/// As JSON: `{"symbol","scientific_name","common_name","moisture_use","shade_tolerance","min_temp_f","image_url"}`,
/// `image_url` being `null` when unknown.
public struct Species: Sendable, Hashable, Codable {
    /// The USDA PLANTS symbol, e.g. `ACRU`: 1–16 upper-case letters and digits.
    public var symbol: String
    /// The scientific name, e.g. `Acer rubrum`.
    public var scientificName: String
    /// The common name, e.g. `red maple`; may be empty.
    public var commonName: String
    /// Water use.
    public var moistureUse: MoistureUse
    /// Shade tolerance.
    public var shadeTolerance: ShadeTolerance
    /// The lowest temperature the species survives, in °F.
    public var minTempF: Double
    /// A picture of the species, when known.
    public var imageURL: String?

    /// Creates a species value.
    public init(
        symbol: String, scientificName: String, commonName: String, moistureUse: MoistureUse,
        shadeTolerance: ShadeTolerance, minTempF: Double, imageURL: String? = nil
    ) {
        self.symbol = symbol
        self.scientificName = scientificName
        self.commonName = commonName
        self.moistureUse = moistureUse
        self.shadeTolerance = shadeTolerance
        self.minTempF = minTempF
        self.imageURL = imageURL
    }

    /// The longest symbol accepted.
    public static let maximumSymbolLength = 16
    /// The accepted minimum temperatures, in °F.
    public static let minTempRange = -100.0...150.0

    /// Whether `text` has the form of a USDA symbol: 1–16 ASCII upper-case letters and digits.
    public static func isValidSymbol(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= maximumSymbolLength
            && text.utf8.allSatisfy { (0x41...0x5A).contains($0) || (0x30...0x39).contains($0) }
    }

    /// The lower-case text a name search looks in: common name, a line break, scientific name.
    public var searchName: String {
        (commonName + "\n" + scientificName).lowercased()
    }

    enum CodingKeys: String, CodingKey {
        case symbol
        case scientificName = "scientific_name"
        case commonName = "common_name"
        case moistureUse = "moisture_use"
        case shadeTolerance = "shade_tolerance"
        case minTempF = "min_temp_f"
        case imageURL = "image_url"
    }

    public func encode(to encoder: any Encoder) throws {
        try encoder.encodeEveryKey([
            CodingKeys.symbol: symbol, .scientificName: scientificName, .commonName: commonName,
            .moistureUse: moistureUse, .shadeTolerance: shadeTolerance, .minTempF: minTempF, .imageURL: imageURL
        ])
    }
}
