#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The instant the tests of windows and rates count from (2026-11-22T10:41:05Z).
let testStart = Date(timeIntervalSince1970: 1_795_344_065)

/// `seconds` after ``testStart``.
func at(_ seconds: Double) -> Date { testStart.addingTimeInterval(seconds) }
