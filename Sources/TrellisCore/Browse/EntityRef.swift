#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The kinds of entity the browse service shows.
public enum EntityKind: String, Sendable, Hashable, CaseIterable, Codable {
    case plant, sensor, button, client, device, model, species

    /// The `CATEGORY` of a top-level entity; empty for those shown only as children.
    public var category: String {
        switch self {
        case .plant: "Plants"
        case .button: "Buttons"
        case .client: "Clients"
        case .device: "Devices"
        case .model: "Models"
        case .sensor, .species: ""
        }
    }
}

/// One entity, named by its kind and its store key: the plant's row id, the sensor's address,
/// the button, client or device id, the model id (`m1`), the species symbol.
///
/// Its `PERM_ID` is `<kind>:<key>`, built from store keys only, so renames, restarts and
/// re-imports keep it. Its `REFCON` is Trellis's own JSON text with the same kind and key; a
/// client must send it back unchanged, and Trellis only ever compares it with the PERM_ID.
public struct EntityRef: Sendable, Hashable, Comparable {
    public var kind: EntityKind
    public var key: String

    public init(_ kind: EntityKind, _ key: String) {
        self.kind = kind
        self.key = key
    }

    /// Reads a PERM_ID; nil when the kind is unknown or the key empty.
    public init?(permID: String) {
        guard let colon = permID.firstIndex(of: ":"), let kind = EntityKind(rawValue: String(permID[..<colon])) else {
            return nil
        }
        let key = String(permID[permID.index(after: colon)...])
        guard !key.isEmpty, key.utf8.count <= 256 else { return nil }
        self.init(kind, key)
    }

    public var permID: String { "\(kind.rawValue):\(key)" }

    /// The REFCON Trellis hands out: `{"key":…,"kind":…}` as compact JSON with sorted keys.
    public var refcon: String {
        String(decoding: JSONEnvelope.encode(Refcon(kind: kind.rawValue, key: key)), as: UTF8.self)
    }

    /// Why `refcon` does not belong to this entity, or nil when it does.
    public func refconProblem(_ refcon: String) -> String? {
        guard let data = refcon.data(using: .utf8), let decoded = try? JSONDecoder().decode(Refcon.self, from: data)
        else {
            return "the REFCON is not one Trellis handed out"
        }
        guard decoded.kind == kind.rawValue, decoded.key == key else {
            return "the REFCON belongs to another entity than its PERM_ID"
        }
        return nil
    }

    public static func < (lhs: EntityRef, rhs: EntityRef) -> Bool {
        (lhs.kind.rawValue, lhs.key) < (rhs.kind.rawValue, rhs.key)
    }

    private struct Refcon: Codable {
        var kind: String
        var key: String
    }
}
