/// Runs `body` with `resource`, then `tearDown` on it whether `body` returned or threw, and hands
/// back what `body` returned or rethrows what it threw.
///
/// The `with…` helpers of the tests (a broker, a relay harness, a database, a cluster, a running
/// `trellis`) are all built on it, so that a failing test never leaves a process or a database
/// behind for the next one.
public func withTearDown<Resource, T>(
    of resource: Resource,
    _ tearDown: (Resource) async -> Void,
    _ body: (Resource) async throws -> T
) async throws -> T {
    let result: T
    do {
        result = try await body(resource)
    } catch {
        await tearDown(resource)
        throw error
    }
    await tearDown(resource)
    return result
}

/// Cancels `task` and waits for it to end, whatever it threw: a service's task torn down before what it
/// uses (a store, a client) is closed.
public func cancelAndWait<T: Sendable>(_ task: Task<T, any Error>) async {
    task.cancel()
    _ = try? await task.value
}
