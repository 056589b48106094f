/// Polls `condition` every 20 ms until it holds; throws a ``TimeoutError`` naming `what` after
/// `timeout`. For states that no event announces (a row in a database, a file on disk).
public func eventually(_ what: String, timeout: Duration = .seconds(30), _ condition: () async throws -> Bool)
    async throws
{
    let deadline = ContinuousClock.now + timeout
    while try await !condition() {
        guard ContinuousClock.now < deadline else {
            throw TimeoutError(message: "timed out after \(timeout) waiting until \(what)")
        }
        try await Task.sleep(for: .milliseconds(20))
    }
}
