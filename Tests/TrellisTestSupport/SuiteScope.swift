import Testing

/// A set-up the tests of one suite share, made once before the suite's first test and taken down after
/// its last: a deployment that costs seconds and processes to start (a broker with accounts, a running
/// `trellis`) when the tests only talk to it. The suite hands it to its tests through a task-local
/// value set in `scope`, and is `.serialized`, so that no two tests use it at once; each test still
/// passes alone or in any order (it leaves its own clients, accounts and topics to no other test).
public struct SuiteScope: SuiteTrait, TestScoping {
    let scope: @Sendable (_ tests: @Sendable () async throws -> Void) async throws -> Void

    /// Once for the suite, not for each of its tests.
    public var isRecursive: Bool { false }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        try await scope(function)
    }
}

extension Trait where Self == SuiteScope {
    /// Runs the suite's tests inside `scope`, which sets up what they share, calls `tests` once, and
    /// must take it down whether `tests` threw or not. A set-up that throws fails the suite's tests.
    public static func sharedScope(
        _ scope: @escaping @Sendable (_ tests: @Sendable () async throws -> Void) async throws -> Void
    ) -> Self {
        SuiteScope(scope: scope)
    }
}
