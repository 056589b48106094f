/// Runs `body` on `store`, then closes it whether `body` threw or not (a failed close after a
/// failure is dropped: the first failure is the one to report).
public func closing<Store: TrellisStore, T>(_ store: Store, _ body: (Store) async throws -> T) async throws -> T {
    do {
        let result = try await body(store)
        try await store.close()
        return result
    } catch {
        try? await store.close()
        throw error
    }
}
