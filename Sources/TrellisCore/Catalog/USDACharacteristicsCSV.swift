/// Reads a USDA PLANTS characteristics download (CSV) into species.
///
/// Columns are found by their header names — "Symbol", "Scientific Name", "Common Name",
/// "Moisture Use", "Shade Tolerance" and "Temperature, Minimum (°F)" — and every other column is
/// ignored. Fields may be quoted (`"a, b"`, with `""` for a quote, and line breaks inside quotes).
/// A row without a usable symbol, scientific name, Moisture Use, Shade Tolerance or minimum
/// temperature is skipped with its line number and the reason: the catalog is searched by those
/// three requirements, so a species USDA has no value for cannot be found by them. An empty
/// common name is kept as empty. Blank lines are ignored. A later row with the same symbol wins.
public enum USDACharacteristicsCSV {
    /// The header names the import needs, in the order they are reported.
    public static let requiredColumns = [
        "Symbol", "Scientific Name", "Common Name", "Moisture Use", "Shade Tolerance", "Temperature, Minimum (°F)"
    ]

    /// What an import read: the species, and every row it skipped.
    public struct Result: Sendable, Equatable {
        /// The usable rows, in file order.
        public var species: [Species]
        /// The rows left out, in file order.
        public var skipped: [SkippedRow]
    }

    /// A row left out of an import.
    public struct SkippedRow: Sendable, Equatable, CustomStringConvertible {
        /// The line the row starts on, counting the header as line 1.
        public var line: Int
        /// Why, as a sentence fragment, e.g. `Moisture Use "Wet" is not Low, Medium or High`.
        public var reason: String

        public var description: String { "line \(line): \(reason)" }
    }

    /// Why a whole file was refused.
    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// The file has no header line.
        case empty
        /// The header lacks these columns.
        case missingColumns([String])
        /// A quoted field is never closed; the line it opens on.
        case unterminatedQuote(line: Int)

        public var description: String {
            switch self {
            case .empty:
                "the file is empty: a USDA PLANTS characteristics CSV starts with a header line"
            case let .missingColumns(names):
                "the header has no column " + names.map { "\"\($0)\"" }.joined(separator: ", ")
                    + "; a USDA PLANTS characteristics CSV needs "
                    + USDACharacteristicsCSV.requiredColumns.map { "\"\($0)\"" }.joined(separator: ", ")
            case let .unterminatedQuote(line):
                "the quoted field opened on line \(line) is never closed"
            }
        }
    }

    /// Parses a whole file.
    public static func parse(_ text: String) throws(Failure) -> Result {
        let records = try records(of: text)
        guard let header = records.first else { throw .empty }
        let names = header.fields.map { normalizeHeader($0) }
        var columns: [Int] = []
        var missing: [String] = []
        for required in requiredColumns {
            if let index = names.firstIndex(of: normalizeHeader(required)) {
                columns.append(index)
            } else {
                missing.append(required)
            }
        }
        guard missing.isEmpty else { throw .missingColumns(missing) }

        var result = Result(species: [], skipped: [])
        for record in records.dropFirst() {
            if record.fields.allSatisfy({ $0.trimmingWhitespace().isEmpty }) { continue }
            let value = { (column: Int) -> String in
                let index = columns[column]
                return index < record.fields.count ? record.fields[index].trimmingWhitespace() : ""
            }
            switch species(
                symbol: value(0), scientificName: value(1), commonName: value(2),
                moisture: value(3), shade: value(4), minTemp: value(5))
            {
            case let .success(species): result.species.append(species)
            case let .failure(reason): result.skipped.append(SkippedRow(line: record.line, reason: reason.message))
            }
        }
        return result
    }

    /// Validates one row's values.
    static func species(
        symbol: String, scientificName: String, commonName: String,
        moisture: String, shade: String, minTemp: String
    ) -> Swift.Result<Species, RowError> {
        if symbol.isEmpty { return .failure(RowError("no Symbol")) }
        guard Species.isValidSymbol(symbol) else {
            return .failure(RowError("Symbol \"\(symbol)\" is not 1–16 upper-case letters and digits"))
        }
        if scientificName.isEmpty { return .failure(RowError("no Scientific Name")) }
        if moisture.isEmpty { return .failure(RowError("no Moisture Use value")) }
        guard let moistureUse = MoistureUse(text: moisture) else {
            return .failure(RowError("Moisture Use \"\(moisture)\" is not Low, Medium or High"))
        }
        if shade.isEmpty { return .failure(RowError("no Shade Tolerance value")) }
        guard let shadeTolerance = ShadeTolerance(text: shade) else {
            return .failure(RowError("Shade Tolerance \"\(shade)\" is not Tolerant, Intermediate or Intolerant"))
        }
        if minTemp.isEmpty { return .failure(RowError("no Temperature, Minimum (°F) value")) }
        guard let temperature = Double(minTemp), temperature.isFinite, Species.minTempRange.contains(temperature) else {
            return .failure(RowError("Temperature, Minimum (°F) \"\(minTemp)\" is not a number from -100 to 150"))
        }
        return .success(
            Species(
                symbol: symbol, scientificName: scientificName, commonName: commonName,
                moistureUse: moistureUse, shadeTolerance: shadeTolerance, minTempF: temperature))
    }

    struct RowError: Error {
        var message: String
        init(_ message: String) { self.message = message }
    }

    /// A header name compared without case, surrounding spaces, a byte-order mark or the degree sign's spelling.
    static func normalizeHeader(_ name: String) -> String {
        var text = name
        if text.hasPrefix("\u{FEFF}") { text.removeFirst() }
        return text.trimmingWhitespace().lowercased().replacingDegreeVariants()
    }

    /// One CSV record and the line it starts on (1-based).
    struct Record: Equatable {
        var line: Int
        var fields: [String]
    }

    /// Splits `text` into records of fields (RFC 4180, with `\n`, `\r\n` or `\r` line ends).
    static func records(of text: String) throws(Failure) -> [Record] {
        var records: [Record] = []
        var fields: [String] = []
        var field: [Unicode.Scalar] = []
        var line = 1
        var recordLine = 1
        var quoteLine = 1
        var inQuotes = false
        var fieldStarted = false
        var scalars = text.unicodeScalars.makeIterator()
        var pending: Unicode.Scalar? = scalars.next()

        func endField() {
            var string = ""
            string.unicodeScalars.append(contentsOf: field)
            fields.append(string)
            field.removeAll(keepingCapacity: true)
            fieldStarted = false
        }
        func endRecord() {
            endField()
            records.append(Record(line: recordLine, fields: fields))
            fields.removeAll()
        }

        while let scalar = pending {
            pending = scalars.next()
            if inQuotes {
                if scalar == "\"" {
                    if pending == "\"" {
                        field.append("\"")
                        pending = scalars.next()
                    } else {
                        inQuotes = false
                    }
                } else {
                    if scalar == "\n" || (scalar == "\r" && pending != "\n") { line += 1 }
                    field.append(scalar)
                }
                continue
            }
            switch scalar {
            case "\"" where !fieldStarted && field.isEmpty:
                inQuotes = true
                fieldStarted = true
                quoteLine = line
            case ",":
                endField()
            case "\r" where pending == "\n":
                break
            case "\n", "\r":
                endRecord()
                line += 1
                recordLine = line
            default:
                field.append(scalar)
                fieldStarted = true
            }
        }
        if inQuotes { throw .unterminatedQuote(line: quoteLine) }
        if fieldStarted || !field.isEmpty || !fields.isEmpty { endRecord() }
        return records
    }
}

extension String {
    /// The string with `º` (masculine ordinal) and `˚` (ring above), often typed for the degree sign, as `°`.
    func replacingDegreeVariants() -> String {
        String(String.UnicodeScalarView(unicodeScalars.map { $0 == "\u{BA}" || $0 == "\u{2DA}" ? "\u{B0}" : $0 }))
    }
}
