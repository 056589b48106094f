#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The payload of `p2o/buttons/<button>/press`: empty (the press happened when it was
/// received) or the ISO 8601 time of the press.
public enum PressPayload {
    /// The largest payload worth parsing; anything longer cannot be a time.
    public static let maximumSize = 256

    /// Returns the press time (nil: use the time of receipt) or the reason the payload is refused.
    public static func parse(_ payload: [UInt8]) -> Result<Date?, PressRejection> {
        if payload.isEmpty { return .success(nil) }
        guard payload.count <= maximumSize else { return .failure(.tooLarge) }
        guard let text = String(validating: payload, as: UTF8.self) else { return .failure(.invalidUTF8) }
        let trimmed = text.trimmingWhitespace()
        if trimmed.isEmpty { return .success(nil) }
        guard let date = ISO8601Time.parse(trimmed) else { return .failure(.invalidTime) }
        return .success(date)
    }
}

/// Why a press payload was refused; the raw value is the dead-letter reason.
public enum PressRejection: String, Error, Sendable, CaseIterable {
    case tooLarge = "too_large"
    case invalidUTF8 = "invalid_utf8"
    case invalidTime = "invalid_press_time"
}

/// A client's availability, as published retained on `p2o/clients/<client>/status`.
public enum ClientStatus: String, Sendable, CaseIterable {
    case online
    case offline

    /// Parses `online` or `offline` (surrounding whitespace ignored); nil for anything else.
    public init?(payload: [UInt8]) {
        guard let text = String(validating: payload, as: UTF8.self) else { return nil }
        self.init(rawValue: text.trimmingWhitespace())
    }
}
