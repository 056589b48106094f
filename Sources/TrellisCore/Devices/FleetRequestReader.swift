/// Reading one fleet request's members, each with the refusal its action answers: the shared
/// vocabulary of ``FleetRequest/actions``'s readers (a device id, a model id, a name, code within the
/// size limit).
struct FleetRequestReader {
    let request: JSONRequest
    let limits: FleetLimits

    /// Refuses members other than `members`.
    func only(_ members: Set<String>) throws {
        if let error = request.requireOnly(members) { throw error }
    }

    /// Refuses members other than `editable` and `key`, naming what can be changed.
    func editable(_ editable: [String], besides key: String) throws {
        guard let member = request.unexpectedMember(allowed: Set(editable + [key])) else { return }
        let names = editable.map { "\"\($0)\"" }
        let can =
            names.count == 1
            ? "only \(names[0]) can" : "only \(names.dropLast().joined(separator: ", ")) and \(names.last!) can"
        throw JSONServiceError(.notEditable, "the member \"\(member)\" cannot be changed; \(can)")
    }

    func device(_ member: String) throws -> String { try DeviceIdentifier.member(member, of: request).get() }

    func modelID(_ member: String) throws -> String {
        let id = try request.string(member).get()
        guard !id.isEmpty, id.count <= 64 else { throw JSONServiceError.invalid(member, "a model id such as \"m1\"") }
        return id
    }

    func name(_ member: String) throws -> String {
        try FleetName.validate(try request.string(member).get(), member: member).get()
    }

    func optionalString(_ member: String) throws -> String? { try request.optionalString(member).get() }

    /// `powerstate`, when given: `online` or `offline`.
    func powerstate() throws -> Powerstate? {
        guard let state = try optionalString("powerstate") else { return nil }
        guard let known = Powerstate(rawValue: state) else {
            throw JSONServiceError.invalid("powerstate", "\"online\" or \"offline\"")
        }
        return known
    }

    /// Absent: leave as is (nil); null: clear (`.some(nil)`); a string: a valid name.
    func nullableName(_ member: String) throws -> String?? {
        switch request.members[member] {
        case nil: nil
        case .null?: .some(nil)
        case let .string(text)?: .some(try FleetName.validate(text, member: member).get())
        case let other?: throw JSONServiceError.invalid(member, "a string or null, not \(other.kindName)")
        }
    }

    /// Absent: leave as is (nil); null: clear (`.some(nil)`); a string: a valid model id.
    func nullableModelID(_ member: String) throws -> String?? {
        switch request.members[member] {
        case nil: nil
        case .null?: .some(nil)
        case .string?: .some(try modelID(member))
        case let other?: throw JSONServiceError.invalid(member, "a model id or null, not \(other.kindName)")
        }
    }

    /// Device or agent code, at most ``FleetLimits/codeBytes`` bytes of UTF-8.
    func code(_ member: String) throws -> String {
        let text = try request.string(member).get()
        let size = text.utf8.count
        guard size <= limits.codeBytes else {
            throw JSONServiceError(.tooLarge, "\(member) has \(size) bytes; at most \(limits.codeBytes) are allowed")
        }
        return text
    }
}
