import TrellisCore

/// What the browse service reads: the top-level entities in a stable order, a page at a time,
/// and the facts of named entities. Reads only; every entity is found by its store key.
public protocol BrowseStore: Sendable {
    /// How many top-level entities there are: plants, buttons (pressed or registered for),
    /// clients, devices and models.
    func browseRootCount() async throws -> Int
    /// The top-level entities from `offset`, at most `limit`: plants by age, then buttons,
    /// clients and devices by id, then models by age. Only that page is read.
    func browseRoot(offset: Int, limit: Int) async throws -> [EntityRef]
    /// The facts of those of `refs` that exist; with `detail`, also the costlier ones DETAIL shows
    /// (press history, log entries).
    func browseFacts(_ refs: [EntityRef], detail: Bool) async throws -> [EntityRef: BrowseFacts]
}
