import Foundation

/// Every stored time, in both backends, is whole milliseconds since 1970 (UTC).
extension Date {
    /// The date as whole milliseconds since 1970, the unit every stored time uses.
    package var storeMilliseconds: Int64 {
        Int64((timeIntervalSince1970 * 1000).rounded())
    }

    /// The date `milliseconds` after 1970 (UTC).
    package init(storeMilliseconds milliseconds: Int64) {
        self.init(timeIntervalSince1970: Double(milliseconds) / 1000)
    }
}
