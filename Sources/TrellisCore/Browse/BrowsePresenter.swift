#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Turns stored facts into the rows of the table model: headers, summaries, children and the
/// `PROPERTIES` of each kind in a fixed order.
public enum BrowsePresenter {
    /// The properties of each kind, in the order DETAIL lists them: fact name and label.
    public static let properties: [EntityKind: [(key: String, label: String)]] = [
        .plant: [
            ("name", "Name"), ("created_at", "Added"), ("sensors", "Sensors"), ("species", "Species"),
            ("species_name", "Species name"), ("alerts", "Care alerts")
        ],
        .sensor: [
            ("address", "Address"), ("plants", "Plants"), ("moisture", "Moisture (1–10)"),
            ("temperature", "Temperature (°F)"), ("read_at", "Read at"), ("alerts", "Care alerts")
        ],
        .button: [
            ("id", "Button"), ("total", "Presses"), ("last_press", "Last press"), ("history", "Recent presses"),
            ("clients", "Registered clients")
        ],
        .client: [
            ("id", "Client"), ("status", "Status"), ("status_at", "Status since"), ("registrations", "Registrations")
        ],
        .device: [
            ("id", "Device"), ("name", "Name"), ("powerstate", "Power state"), ("rssi", "RSSI (dBm)"),
            ("agent_id", "Agent"), ("agent_status", "Agent status"), ("model", "Model"), ("log", "Latest log entries")
        ],
        .model: [
            ("id", "Model"), ("name", "Name"), ("devices", "Devices"), ("latest_build", "Latest build"),
            ("latest_build_at", "Latest build at")
        ],
        .species: [
            ("symbol", "USDA symbol"), ("common_name", "Common name"), ("scientific_name", "Scientific name"),
            ("moisture_use", "Moisture use"), ("shade_tolerance", "Shade tolerance"),
            ("min_temp_f", "Minimum temperature (°F)"),
            ("watering", "Watering"), ("light", "Light"), ("cold", "Cold")
        ]
    ]

    /// The ROOT / DRILL row of an entity.
    public static func navigationRow(_ facts: BrowseFacts) -> [String] {
        [
            facts.ref.permID, facts.ref.refcon, facts.ref.kind.category, header(facts), summary(facts),
            json(facts.children.map(\.permID))
        ]
    }

    /// The DETAIL row of an entity.
    public static func detailRow(_ facts: BrowseFacts) -> [String] {
        let listed = (properties[facts.ref.kind] ?? []).map { spec in
            BrowseProperty(key: spec.key, label: spec.label, value: value(spec.key, of: facts))
        }
        return [
            facts.ref.permID, facts.ref.refcon, header(facts), summary(facts), identifier(facts),
            facts["image_url"] ?? "", json(listed)
        ]
    }

    static func header(_ facts: BrowseFacts) -> String {
        switch facts.ref.kind {
        case .plant, .model, .device: facts["name"] ?? facts.ref.key
        case .species: facts["common_name"] ?? facts.ref.key
        case .sensor, .button, .client: facts.ref.key
        }
    }

    static func identifier(_ facts: BrowseFacts) -> String {
        facts.ref.kind == .plant ? (facts["name"] ?? facts.ref.key) : facts.ref.key
    }

    static func summary(_ facts: BrowseFacts) -> String {
        func join(_ parts: [String?]) -> String {
            parts.compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: " · ")
        }
        switch facts.ref.kind {
        case .plant:
            return join([
                facts["sensors"].map { "sensors \($0)" } ?? "no sensors",
                facts["species"].map { "\(facts["species_name"] ?? $0) (\($0))" }, facts["alerts"]
            ])
        case .sensor:
            guard let moisture = facts["moisture"] else { return "no reading yet" }
            return join(["moisture \(moisture)", facts["temperature"].map { "\($0) °F" }, facts["read_at"]])
        case .button:
            return join([count(facts["total"], "press", "presses"), facts["last_press"].map { "last \($0)" }])
        case .client:
            return join([
                facts["status"], facts["registration_count"].map { "registered for " + count($0, "button", "buttons") }
            ])
        case .device:
            return join([facts["powerstate"], facts["model"].map { "model \($0)" }, facts["rssi"].map { "\($0) dBm" }])
        case .model:
            return join([count(facts["device_count"], "device", "devices"), facts["latest_build"].map { "build \($0)" }]
            )
        case .species:
            return join([
                facts["scientific_name"], facts["moisture_use"].map { "\($0) water" },
                facts["shade_tolerance"].map { "shade \($0.lowercased())" }
            ])
        }
    }

    /// `1 press`, `2 presses`; a missing count is 0.
    static func count(_ text: String?, _ one: String, _ many: String) -> String {
        let text = text ?? "0"
        return "\(text) \(text == "1" ? one : many)"
    }

    /// A property value; a species' care sentences are derived from its needs.
    static func value(_ key: String, of facts: BrowseFacts) -> String {
        if let stored = facts[key] { return stored }
        guard facts.ref.kind == .species else { return "" }
        switch key {
        case "watering":
            return facts["moisture_use"].flatMap(MoistureUse.init(rawValue:)).map(CareAdvice.watering) ?? ""
        case "light":
            return facts["shade_tolerance"].flatMap(ShadeTolerance.init(rawValue:)).map(CareAdvice.light) ?? ""
        case "cold": return facts["min_temp_f"].flatMap(Double.init).map { CareAdvice.cold(minTempF: $0) } ?? ""
        default: return ""
        }
    }

    static func json(_ value: some Encodable) -> String {
        String(decoding: JSONEnvelope.encode(value), as: UTF8.self)
    }
}
