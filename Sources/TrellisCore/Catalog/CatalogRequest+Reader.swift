/// Reads the members of one catalog request; every failure is a `JSONServiceError` naming the member.
struct CatalogRequestReader {
    let request: JSONRequest
    let limits: CatalogLimits

    func only<T>(_ allowed: Set<String>, _ body: () throws -> T) throws -> T {
        if let error = request.requireOnly(allowed) { throw error }
        return try body()
    }

    func search(perClient: Bool) throws -> CatalogRequest {
        try only(["moisture", "shade", "min_temp", "name", "limit", "cursor", "seed", "unseen_only"]) {
            var filter = CatalogFilter()
            if let text = try optionalString("moisture") { filter.moisture = try unwrap(CatalogFilter.moisture(text)) }
            if let text = try optionalString("shade") { filter.shade = try unwrap(CatalogFilter.shade(text)) }
            filter.minTemp = try minTemp()
            if let text = try optionalString("name") { filter.name = try unwrap(CatalogFilter.name(text)) }
            let limit = try value(request.optionalInteger("limit", in: 1...limits.pageSize)) ?? limits.pageSize
            let seed = try seedMember()
            var cursor: CatalogCursor?
            if let text = try optionalString("cursor") {
                guard let parsed = CatalogCursor(encoded: text) else {
                    throw JSONServiceError.invalid("cursor", "a next_cursor from an earlier reply")
                }
                if let seed, seed != parsed.seed {
                    throw JSONServiceError.invalid("seed", "the seed of the cursor's search (or left out)")
                }
                cursor = parsed
            }
            let unseenOnly = try bool("unseen_only") ?? false
            if unseenOnly, !perClient {
                throw JSONServiceError(
                    .invalidRequest,
                    "the member \"unseen_only\" needs the per-client form: Trellis remembers what it showed each client"
                )
            }
            return .search(
                filter: filter, seed: seed ?? cursor?.seed, cursor: cursor, limit: limit, unseenOnly: unseenOnly)
        }
    }

    func minTemp() throws -> TemperatureRange? {
        switch request.members["min_temp"] {
        case nil: return nil
        case let .string(text)?: return try unwrap(CatalogFilter.minTemp(bucket: text))
        case let .object(members)?:
            if let extra = members.keys.filter({ $0 != "from" && $0 != "to" }).min() {
                throw JSONServiceError.invalid(
                    "min_temp", "a bucket or {\"from\":…,\"to\":…}; \"\(extra)\" is not known")
            }
            func end(_ key: String) throws -> Double? {
                guard let value = members[key] else { return nil }
                guard let number = value.doubleValue else {
                    throw JSONServiceError.invalid("min_temp", "\(key) as a number of °F")
                }
                return number
            }
            return try unwrap(CatalogFilter.minTemp(from: try end("from"), to: try end("to")))
        case let other?:
            throw JSONServiceError.invalid(
                "min_temp", "-75..-17, -17..23, 23..100, any or {\"from\":…,\"to\":…}, not \(other.kindName)")
        }
    }

    func seedMember() throws -> UInt64? {
        guard let value = request.members["seed"] else { return nil }
        guard let number = value.integerValue, number >= 0, UInt64(number) <= CatalogShuffle.maximumSeed else {
            throw JSONServiceError.invalid("seed", "a whole number from 0 to \(CatalogShuffle.maximumSeed)")
        }
        return UInt64(number)
    }

    func symbol(_ member: String) throws -> String {
        let text = try value(request.string(member))
        guard Species.isValidSymbol(text) else {
            throw JSONServiceError.invalid(
                member, "a USDA symbol: 1–\(Species.maximumSymbolLength) upper-case letters and digits")
        }
        return text
    }

    func symbols() throws -> [String] {
        guard let value = request.members["symbols"] else { throw JSONServiceError.missing("symbols") }
        guard case let .array(items) = value, !items.isEmpty else {
            throw JSONServiceError.invalid("symbols", "a non-empty list of USDA symbols")
        }
        guard items.count <= limits.symbolsPerRequest else {
            throw JSONServiceError(
                .tooLarge,
                "the member \"symbols\" names \(items.count) species; at most \(limits.symbolsPerRequest) at once")
        }
        var seen = Set<String>()
        return try items.compactMap { item in
            guard case let .string(text) = item, Species.isValidSymbol(text) else {
                throw JSONServiceError.invalid(
                    "symbols", "a list of USDA symbols (1–\(Species.maximumSymbolLength) upper-case letters and digits)"
                )
            }
            return seen.insert(text).inserted ? text : nil
        }
    }

    func board() throws -> Int64 {
        guard let value = request.members["board"] else { throw JSONServiceError.missing("board") }
        guard let id = value.integerValue, id > 0 else {
            throw JSONServiceError.invalid("board", "a board id from boards/create or boards/list")
        }
        return id
    }

    func boardName(required: Bool) throws -> String? {
        guard let text = required ? try value(request.string("name")) : try optionalString("name") else { return nil }
        let trimmed = text.trimmingWhitespace()
        guard !trimmed.isEmpty else { throw JSONServiceError.invalid("name", "a board name that is not empty") }
        guard trimmed.count <= limits.boardNameLength else {
            throw JSONServiceError.invalid(
                "name", "at most \(limits.boardNameLength) characters long; it has \(trimmed.count)")
        }
        guard !trimmed.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw JSONServiceError.invalid("name", "a board name without control characters")
        }
        return trimmed
    }

    func boardDescription() throws -> String? {
        guard let text = try optionalString("description") else { return nil }
        guard text.count <= limits.boardDescriptionLength else {
            throw JSONServiceError(
                .tooLarge,
                "the member \"description\" has \(text.count) characters; at most \(limits.boardDescriptionLength) are allowed"
            )
        }
        return text
    }

    func plant() throws -> String {
        let text = try value(request.string("plant"))
        guard !text.isEmpty, text.count <= limits.plantNameLength else {
            throw JSONServiceError.invalid(
                "plant", "the name of a plant of the plant tracker, 1–\(limits.plantNameLength) characters")
        }
        return text
    }

    func bool(_ member: String) throws -> Bool? {
        switch request.members[member] {
        case nil: return nil
        case let .bool(flag)?: return flag
        case let other?: throw JSONServiceError.invalid(member, "true or false, not \(other.kindName)")
        }
    }

    func optionalString(_ member: String) throws -> String? { try value(request.optionalString(member)) }

    func value<T>(_ result: Result<T, JSONServiceError>) throws -> T { try result.get() }

    func unwrap<T>(_ result: Result<T, FilterError>) throws -> T {
        switch result {
        case let .success(value): return value
        case let .failure(error):
            throw JSONServiceError(.invalidRequest, "the member \"\(error.member)\" is wrong: \(error.message)")
        }
    }
}
