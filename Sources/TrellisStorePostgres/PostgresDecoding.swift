import TrellisCore
import TrellisStore
/// Gathering decoded rows: postgres-nio collects a row sequence, but not the typed sequence its
/// `decode(_:)` makes (a tuple per row, which ``PostgresConnection/values(_:as:logger:)`` cannot take).
extension AsyncSequence {
    /// Every element, in order.
    func gathered() async throws -> [Element] {
        var elements: [Element] = []
        for try await element in self { elements.append(element) }
        return elements
    }
}
