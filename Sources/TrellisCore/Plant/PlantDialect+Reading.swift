extension PlantDialect {
    /// Reads the payload of a well-formed request (already percent-decoded by ``PlantProtocol``)
    /// into what it asks for, or the error tag of the first check it fails.
    ///
    /// The checks and their order are shared (``PlantName``, ``NewPlantRequest``, ``PlantRename``);
    /// the dialects differ only where the released app writes its payloads differently:
    ///
    /// | operation | ``lossless`` | ``original`` |
    /// |---|---|---|
    /// | `REQ_plantInfoOnStartup` | empty or `all`, or a name | a decimal index (`0`, `1`, …); otherwise as lossless |
    /// | `REQ_addNewPlant` | `<name>,<sensor>[,<sensor>…]`, sensors `0x36` | `<name>--["0x36", "37"]` (cut at the last `--`), or the comma form; sensors read as `int(x, 16)` |
    ///
    /// `REQ_plantSensorData`, `REQ_numPlants`, `REQ_deletePlant` and `REQ_editPlant` read the same in both.
    public func read(_ operation: PlantOperation, payload: String, maximumNameLength: Int = PlantName.maximumLength)
        -> Result<PlantRequest, PlantErrorTag>
    {
        switch operation {
        case .plantInfoOnStartup:
            if self == .original, let index = Self.refreshIndex(payload) { return .success(.plantInfo(.index(index))) }
            return switch PlantSensorQuery(payload: payload) {
            case .all: .success(.plantInfo(.all))
            case let .plant(name): .success(.plantInfo(.plant(name)))
            }
        case .plantSensorData:
            return .success(.sensorData(PlantSensorQuery(payload: payload)))
        case .numPlants:
            return .success(.numPlants)
        case .addNewPlant:
            let parsed =
                self == .original
                ? Self.readAppAdd(payload, maximumNameLength: maximumNameLength)
                : NewPlantRequest.parse(payload, maximumNameLength: maximumNameLength)
            return parsed.map { .addPlant($0) }
        case .deletePlant:
            return switch PlantName.validate(payload, maximumLength: .max) {
            case .failure: .failure(.cannotDeletePlant)
            case let .success(name): .success(.deletePlant(name))
            }
        case .editPlant:
            return PlantRename.parse(payload, maximumNameLength: maximumNameLength).map { .renamePlant($0) }
        }
    }

    /// A payload of only decimal digits (after trimming), as the app's refresh sends: `0`, `1`, ….
    /// In the original dialect such a `REQ_plantInfoOnStartup` asks for the plant at that index.
    public static func refreshIndex(_ payload: String) -> Int? {
        let text = payload.trimmingPlantWhitespace()
        guard (1...9).contains(text.utf8.count), text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else {
            return nil
        }
        return Int(text)
    }

    /// The original app's add: `<name>--<sensors>`, where `<sensors>` is a Swift array's
    /// description of what the user typed (`["0x36", "37"]`). The name is what precedes the last
    /// `--[` (else the last `--`), so a name may itself contain `--`. A payload without `--` is
    /// read in the comma form. Either way a sensor is read as the host did, with `int(x, 16)`.
    static func readAppAdd(_ payload: String, maximumNameLength: Int) -> Result<NewPlantRequest, PlantErrorTag> {
        guard let cut = payload.ranges(of: "--[").last ?? payload.ranges(of: "--").last else {
            let parts = payload.split(separator: ",", omittingEmptySubsequences: false)
            return NewPlantRequest.validate(
                name: parts[0], sensors: parts.dropFirst(), maximumNameLength: maximumNameLength,
                address: SensorAddress.hostRead)
        }
        let name = payload[..<cut.lowerBound]
        let list = payload[payload.index(cut.lowerBound, offsetBy: 2)...]
        // The name is checked first, whatever the list holds, as in every form of add.
        if case let .failure(tag) = PlantName.validate(name, maximumLength: maximumNameLength) { return .failure(tag) }
        guard let sensors = SwiftArrayDescription.strings(list) else { return .failure(.invalidPlantSensorID) }
        return NewPlantRequest.validate(
            name: name, sensors: sensors, maximumNameLength: maximumNameLength,
            address: SensorAddress.hostRead)
    }
}

/// Reads the text Swift's `"\(array)"` writes for an array of strings, `["0x36", "37"]`, back
/// into its strings. Elements may also be bare (`[36, 37]`); a list without brackets is read as
/// comma-separated. Returns nil when a quoted element is not closed, something other than `,`
/// follows one, or only one of the brackets is there.
enum SwiftArrayDescription {
    static func strings(_ text: some StringProtocol) -> [String]? {
        var body = Substring(text.trimmingPlantWhitespace())
        guard body.hasPrefix("[") == body.hasSuffix("]") else { return nil }
        if body.hasPrefix("[") { body = body.dropFirst().dropLast() }
        var items: [String] = []
        var scalars = body.unicodeScalars[...]
        func skipSpaces() { while let first = scalars.first, first.properties.isWhitespace { scalars.removeFirst() } }
        skipSpaces()
        if scalars.isEmpty { return [] }
        while true {
            skipSpaces()
            var item = ""
            if scalars.first == "\"" {
                scalars.removeFirst()
                var closed = false
                while let scalar = scalars.popFirst() {
                    if scalar == "\"" { closed = true; break }
                    if scalar == "\\", let escaped = scalars.popFirst() {
                        switch escaped {
                        case "n": item.unicodeScalars.append("\n")
                        case "t": item.unicodeScalars.append("\t")
                        case "r": item.unicodeScalars.append("\r")
                        case "0": item.unicodeScalars.append("\0")
                        default: item.unicodeScalars.append(escaped)
                        }
                    } else {
                        item.unicodeScalars.append(scalar)
                    }
                }
                guard closed else { return nil }
                skipSpaces()
                if let next = scalars.first, next != "," { return nil }
            } else {
                while let scalar = scalars.first, scalar != "," { item.unicodeScalars.append(scalars.removeFirst()) }
            }
            items.append(item)
            guard scalars.popFirst() == "," else { return items }
        }
    }
}
