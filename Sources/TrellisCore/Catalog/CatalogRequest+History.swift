#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Reading `plants/history`: a plant or a sensor, `from` and optionally `to` (ISO 8601, within
/// ``HistoryRequest/earliest`` and ``HistoryRequest/latest``, `from` before `to`), and optionally
/// the finest `step` wanted, in seconds.
extension CatalogRequestReader {
    func history() throws -> CatalogRequest {
        try only(["plant", "sensor", "from", "to", "step"]) {
            let subject: HistorySubject
            switch (request.members["plant"], request.members["sensor"]) {
            case (nil, nil):
                throw JSONServiceError(.invalidRequest, "give \"plant\" (a plant's name) or \"sensor\" (its address)")
            case (_?, _?):
                throw JSONServiceError(.invalidRequest, "give \"plant\" or \"sensor\", not both")
            case (_?, nil):
                subject = .plant(try plant())
            case (nil, _?):
                let text = try value(request.string("sensor"))
                guard let address = SensorAddress.normalize(text) else {
                    throw JSONServiceError.invalid("sensor", "a sensor address from 0x03 to 0x77, such as \"0x36\"")
                }
                subject = .sensor(address)
            }
            let from = try time("from")!
            let to = try time("to", required: false)
            if let to, to <= from {
                throw JSONServiceError(.invalidRequest, "\"from\" must come before \"to\"")
            }
            let step = try value(request.optionalInteger("step", in: 1...HistoryRequest.maxStep))
            return .history(HistoryRequest(subject: subject, from: from, to: to, step: step))
        }
    }

    /// An ISO 8601 time member within the sane bounds.
    private func time(_ member: String, required: Bool = true) throws -> Date? {
        guard required || request.members[member] != nil else { return nil }
        let text = try value(request.string(member))
        let expected = "an ISO 8601 time such as \"2026-11-22T10:41:05Z\", from 1970 to 2099"
        guard let date = ISO8601Time.parse(text) else { throw JSONServiceError.invalid(member, expected) }
        guard date >= HistoryRequest.earliest, date < HistoryRequest.latest else {
            throw JSONServiceError.invalid(member, expected)
        }
        return date
    }
}
