/// What the store knows of one entity, as text by fact name, and its children in display order.
///
/// The fact names of each kind are listed by ``BrowsePresenter/properties``; a fact the store
/// does not have (no reading yet, no model) is simply absent and shown as `""`.
public struct BrowseFacts: Sendable, Equatable {
    public var ref: EntityRef
    public var values: [String: String]
    public var children: [EntityRef]

    public init(ref: EntityRef, values: [String: String], children: [EntityRef] = []) {
        self.ref = ref
        self.values = values
        self.children = children
    }

    public subscript(_ name: String) -> String? { values[name] }
}

/// One `PROPERTIES` entry of a DETAIL row.
public struct BrowseProperty: Sendable, Hashable, Codable {
    public var key: String
    public var label: String
    public var value: String
}

/// The table model every browse reply carries: column names and rows of strings.
public struct BrowseTable: Sendable, Equatable, Encodable {
    public static let navigationColumns = ["PERM_ID", "REFCON", "CATEGORY", "SUMMARY_HEADER", "SUMMARY", "CHILDREN"]
    public static let detailColumns = [
        "PERM_ID", "REFCON", "SUMMARY_HEADER", "SUMMARY", "IDENTIFIER", "IMAGE_URL", "PROPERTIES"
    ]

    public var columns: [String]
    public var rows: [[String]]
    /// ROOT only: how many root entities there are over all pages.
    public var total: Int?
    /// DRILL and DETAIL: the named entities that are not answered, with the reason.
    public var missing: [BrowseMissing]?

    public init(columns: [String], rows: [[String]], total: Int? = nil, missing: [BrowseMissing]? = nil) {
        self.columns = columns
        self.rows = rows
        self.total = total
        self.missing = missing
    }

    enum CodingKeys: String, CodingKey { case columns, rows, total, missing }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(columns, forKey: .columns)
        try container.encode(rows, forKey: .rows)
        try container.encodeIfPresent(total, forKey: .total)
        try container.encodeIfPresent(missing, forKey: .missing)
    }
}
