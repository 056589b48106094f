#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The plants the original plant tracker host (`host.py`) kept: one file per phone,
/// `userdata/<phone>.json`, a JSON list of `{"Name": …, "Sensors": …}` written by its
/// `REQ_addNewPlant` with `json.dump(plants, outfile)`. `Sensors` is the text the app sent after
/// `--`, a list such as `["0x36", "37"]`, which the host read with `json.loads` and each address
/// with `int(x, 16)`; Trellis reads them the same way (``SensorAddress/hostRead(_:)``).
///
/// Pure: ``read(phone:contents:maximumNameLength:)`` reads one file, ``merge(_:)`` makes the
/// household's list out of every phone's, one plant once however many phones have it.
public enum HostUserdata {
    /// A plant one or more phones had.
    public struct Plant: Sendable, Equatable {
        /// The trimmed name.
        public var name: String
        /// Canonical addresses (`0x37` for `37`), in the phone's order, each once.
        public var sensors: [String]
        /// The phones (file names without `.json`) that had it.
        public var phones: [String]

        public init(name: String, sensors: [String], phones: [String]) {
            self.name = name
            self.sensors = sensors
            self.phones = phones
        }
    }

    /// Something of the files that cannot be taken, and why, in one sentence.
    public struct Problem: Sendable, Equatable, CustomStringConvertible {
        /// The file, or `phone.json: "Name"` for one plant of it.
        public var subject: String
        public var reason: String

        public init(subject: String, reason: String) {
            self.subject = subject
            self.reason = reason
        }

        public var description: String { "\(subject): \(reason)" }
    }

    /// The plants of one phone's file and what of it cannot be taken. A file that is not a JSON
    /// list gives no plants and one problem; a bad entry only its own problem.
    public static func read(phone: String, contents: [UInt8], maximumNameLength: Int) -> (
        plants: [Plant], problems: [Problem]
    ) {
        let file = "\(phone).json"
        guard String(validating: contents, as: UTF8.self) != nil,
            let value = try? JSONDecoder().decode(JSONValue.self, from: Data(contents))
        else {
            return (
                [], [Problem(subject: file, reason: "unreadable: not JSON, as host.py's json.load would also find")]
            )
        }
        guard case let .array(entries) = value else {
            return (
                [],
                [Problem(subject: file, reason: "unreadable: \(value.kindName), not the list of plants host.py writes")]
            )
        }
        var plants: [Plant] = []
        var problems: [Problem] = []
        for (index, entry) in entries.enumerated() {
            guard case let .object(members) = entry, case let .string(rawName)? = members["Name"] else {
                problems.append(Problem(subject: "\(file) entry \(index + 1)", reason: "unreadable: no \"Name\" text"))
                continue
            }
            let subject = "\(file): \"\(rawName)\""
            let name: String
            switch PlantName.validate(rawName, maximumLength: maximumNameLength) {
            case let .success(valid): name = valid
            case .failure(.plantNameTooLong):
                problems.append(
                    Problem(
                        subject: subject,
                        reason: "name too long: more than \(maximumNameLength) characters (plant.max_name_length)"))
                continue
            case .failure:
                problems.append(Problem(subject: subject, reason: "not a usable name (empty, or with a comma)"))
                continue
            }
            switch sensors(members["Sensors"]) {
            case let .success(addresses): plants.append(Plant(name: name, sensors: addresses, phones: [phone]))
            case let .failure(problem): problems.append(Problem(subject: subject, reason: problem.reason))
            }
        }
        return (plants, problems)
    }

    /// The `Sensors` text read as host.py read it: `json.loads`, then `int(x, 16)` for each.
    static func sensors(_ value: JSONValue?) -> Result<[String], Unreadable> {
        guard case let .string(text)? = value else { return .failure(Unreadable("unreadable: no \"Sensors\" text")) }
        guard let list = try? JSONDecoder().decode(JSONValue.self, from: Data(text.utf8)), case let .array(items) = list
        else {
            return .failure(
                Unreadable("unreadable sensors \(text): not a JSON list, which host.py could not read either"))
        }
        var addresses: [String] = []
        for item in items {
            guard case let .string(typed) = item, let address = SensorAddress.hostRead(typed) else {
                return .failure(
                    Unreadable(
                        "sensor \(JSONEnvelope.encode(item).text) is not an I2C address from 0x03 to 0x77 read as int(x, 16)"
                    ))
            }
            if !addresses.contains(address) { addresses.append(address) }
        }
        if addresses.isEmpty { return .failure(Unreadable("no sensors")) }
        return .success(addresses)
    }

    /// The household's plants from every phone's, in the order first seen (phones in the order
    /// given). The same name with the same sensors (in any order) is one plant; the same name with
    /// other sensors on another phone cannot be taken, as Trellis keeps one plant per name.
    public static func merge(_ phones: [[Plant]]) -> (plants: [Plant], problems: [Problem]) {
        var merged: [Plant] = []
        var clashes: [String: [String]] = [:]
        for plant in phones.joined() {
            if let index = merged.firstIndex(where: { $0.name == plant.name }) {
                if Set(merged[index].sensors) == Set(plant.sensors) {
                    merged[index].phones += plant.phones.filter { !merged[index].phones.contains($0) }
                } else {
                    clashes[
                        plant.name,
                        default: merged[index].phones.map { "\($0): \(merged[index].sensors.joined(separator: " "))" }
                    ]
                    .append(contentsOf: plant.phones.map { "\($0): \(plant.sensors.joined(separator: " "))" })
                }
            } else {
                merged.append(plant)
            }
        }
        let problems = merged.filter { clashes[$0.name] != nil }.map { plant in
            Problem(
                subject: "\"\(plant.name)\"",
                reason: "the phones have it with other sensors (\(clashes[plant.name]!.joined(separator: "; ")))")
        }
        return (merged.filter { clashes[$0.name] == nil }, problems)
    }
}

/// Why a plant's sensors cannot be read.
struct Unreadable: Error {
    var reason: String
    init(_ reason: String) { self.reason = reason }
}

private extension [UInt8] {
    var text: String { String(decoding: self, as: UTF8.self) }
}
