import Foundation
import Testing

/// Floods of connections against Trellis's HTTP servers, one per server, from Tests/HTTP/slow_connections.py, and
/// the checks the limits tests make of each: the server holds exactly its cap of them while they stall, and in the
/// end it closed every one, counted under the limit that closed it or as evicted by a newcomer.
struct ConnectionFloods {
    /// One server under a flood.
    struct Target {
        var port: Int
        /// The server's label in the metrics (`socketio`, `health`).
        var server: String
        /// How many connections the server holds at once.
        var cap: Int
        /// The path each connection asks for, when the mode sends a request head.
        var path: String?
    }

    let floods: [(process: TrellisBinary, target: Target)]
    /// Connections opened against each server.
    let count: Int

    /// Starts a flood of `count` connections in `mode` against each of `targets`, and waits until each has opened
    /// them all: none failed to connect, and each server holds exactly its cap, every newcomer beyond it having
    /// taken the place of an older one. The client counts a connection that lived 9 s or more as closed late.
    static func start(count: Int, mode: String, against targets: [Target]) async throws -> ConnectionFloods {
        let floods = try targets.map { target in
            let path = target.path.map { ["--path", $0] } ?? []
            let arguments =
                [HTTPLimitsTests.script, "--port", "\(target.port)", "--count", "\(count)", "--mode", mode]
                + path + ["--early", "9"]
            return (process: try TrellisBinary.start(arguments, executable: "/usr/bin/python3"), target: target)
        }
        for (flood, target) in floods {
            try await flood.waitForOutput(#""event": "opened""#, timeout: .seconds(60))
            let opened = try #require(HTTPLimitsTests.event("opened", flood.output))
            #expect(opened["connect_failures"] as? Int == 0, "\(flood.output)")
            #expect(opened["open"] as? Int == target.cap, "\(flood.output)")
        }
        return ConnectionFloods(floods: floods, count: count)
    }

    /// Waits for each flood to end, with every connection closed and counted as closed early or late; returns
    /// each flood's summary (`early`, `late`, `late_min`, …), in the order of the targets.
    func finished() async throws -> [[String: Any]] {
        var summaries: [[String: Any]] = []
        for (flood, _) in floods {
            #expect(try await flood.waitForExit(timeout: .seconds(120)) == 0, "\(flood.output)")
            let done = try #require(HTTPLimitsTests.event("done", flood.output), "\(flood.output)")
            #expect(done["still_open"] as? Int == 0, "\(flood.output)")
            #expect((done["early"] as? Int ?? 0) + (done["late"] as? Int ?? 0) == count, "\(flood.output)")
            summaries.append(done)
        }
        return summaries
    }

    /// Checks that each server closed all its flood's connections, each counted under `reason` (the timeout that
    /// closes a stalled connection) or `evicted`, in the metrics read from `metricsURL`: every connection the
    /// client saw closed early was evicted, and one evicted late on a loaded machine looks late to the client, so
    /// the two agree up to those; at most the cap were held long enough to time out. And that Trellis's `output`
    /// logged the closes at most once a minute per server and reason, not once per connection.
    func expectClosed(_ summaries: [[String: Any]], reason: String, metricsURL: String, output: String) async throws {
        let (_, metrics) = try await MetricsTests.get(metricsURL)
        for ((_, target), done) in zip(floods, summaries) {
            let series = #"trellis_http_connections_closed_total{server="\#(target.server)",reason="#
            let evicted = HTTPLimitsTests.value(series + #""evicted"}"#, metrics) ?? 0
            let timedOut = HTTPLimitsTests.value(series + #""\#(reason)"}"#, metrics) ?? 0
            let early = done["early"] as? Int ?? -1, late = done["late"] as? Int ?? -1
            #expect(
                timedOut + evicted == count && timedOut <= late && evicted >= early,
                "\(target.server): \(done) \(metrics)")
            #expect(
                timedOut > 0 && timedOut <= target.cap && evicted >= count - target.cap,
                "\(target.server): \(metrics)")
        }
        let logged = output.components(separatedBy: "HTTP connections closed by the server's limits").count - 1
        #expect(logged >= 2 && logged <= 4, "\(logged) lines")
    }
}
