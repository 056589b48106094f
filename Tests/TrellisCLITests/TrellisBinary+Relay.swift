import Foundation
import TrellisBroker
import TrellisTestSupport

/// `trellis run` against a test broker with its HTTP servers (Socket.IO, health, metrics) on free
/// loopback ports: the start the Socket.IO and HTTP server tests share, so that each says only what
/// its relay has beyond it.
extension TrellisBinary {
    /// Starts `trellis run` on `broker` with a free loopback port for each flag of `servers` (`--socketio`,
    /// `--health`, `--metrics`; `ports` holds them in that order), `spare` more free ports after them for the
    /// caller's own use, and `more(ports)` as further arguments; `environment` is set beside this process's
    /// own. The state directory is `state`, or a fresh one. Returns once every server listens and the relay
    /// is connected to the broker.
    static func startRelay(
        broker: TestBroker, servers: [String], spare: Int = 0, state: String? = nil,
        environment: [String: String] = [:], _ more: ([Int]) -> [String] = { _ in [] }
    ) async throws -> (trellis: TrellisBinary, ports: [Int]) {
        let (trellis, ports) = try await startListening(
            ports: servers.count + spare,
            { ports in
                ["run", "--broker", broker.address, "--state", state ?? temporaryDirectory()]
                    + zip(servers, ports).flatMap { [$0, "\($1)"] } + more(ports)
            },
            ready: { ports in ports.prefix(servers.count).map { "Server started and listening on 127.0.0.1:\($0)" } },
            environment: ProcessInfo.processInfo.environment.merging(environment) { $1 })
        try await trellis.waitForOutput("connected to the broker")
        return (trellis, ports)
    }
}
