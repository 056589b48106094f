import Foundation
import TrellisBroker
import TrellisStore
import TrellisStorePostgres

/// A PostgreSQL cluster of one test's own (`Tests/Postgres/cluster.sh` in a new directory), for
/// tests that stop the server and start it again: the shared cluster of `make test` serves every
/// other test at the same time and must not go away. ``halt()`` stops it as an operator would
/// (fast shutdown: sessions get 57P01); ``resume()`` brings it back on the same port, so the
/// store's URL stays valid.
public final class OwnPostgresCluster: Sendable {
    public let directory: String
    public let url: PostgresURL

    static var script: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Postgres/cluster.sh").path
    }

    private init(directory: String, url: PostgresURL) {
        self.directory = directory
        self.url = url
    }

    /// Creates and starts a cluster in a new directory under /tmp (its socket path must be short).
    public static func start() async throws -> OwnPostgresCluster {
        let directory = "/tmp/trellis-pg-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let text = try await run("start", directory)
        return OwnPostgresCluster(directory: directory, url: try PostgresURL(text))
    }

    /// Stops the server; the cluster stays, for ``resume()``.
    public func halt() async throws {
        _ = try await Self.run("halt", directory)
    }

    /// Starts the halted server again, on its port; throws when another process took the port.
    public func resume() async throws {
        let text = try await Self.run("start", directory)
        guard try PostgresURL(text).port == url.port else {
            throw TimeoutError(message: "the cluster came back on another port than \(url.port)")
        }
    }

    /// Stops the server and removes the cluster.
    public func remove() async {
        _ = try? await Self.run("stop", directory)
    }

    /// Runs `body` with a cluster of its own, removed afterwards.
    public static func with<T>(_ body: (OwnPostgresCluster) async throws -> T) async throws -> T {
        try await withTearDown(of: try await start(), { await $0.remove() }, body)
    }

    /// Runs cluster.sh; returns the last line it printed on standard output.
    private static func run(_ verb: String, _ directory: String) async throws -> String {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("cluster-\(UUID().uuidString).out")
            .path
        let process = try ChildProcess(path: script, arguments: [verb, directory], outputPath: output)
        try await eventually("cluster.sh \(verb) exits", timeout: .seconds(120)) { !process.isRunning }
        let status = process.terminationStatus
        let printed = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        try? FileManager.default.removeItem(atPath: output)
        guard status == 0 else { throw TimeoutError(message: "cluster.sh \(verb) \(directory) failed: \(printed)") }
        return printed.split(separator: "\n").last.map(String.init) ?? ""
    }
}
