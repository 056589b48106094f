import Foundation
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
import TrellisBroker
import TrellisTestSupport

/// Debian's Prometheus (`/usr/bin/prometheus`) and `promtool`, as `make deps` installs them: a server
/// of the test's own on a free loopback port, with its configuration and storage in a temporary
/// directory, asked through its HTTP API.
struct PrometheusServer {
    static let prometheus = "/usr/bin/prometheus"
    static let promtool = "/usr/bin/promtool"

    /// True when the tests that need Prometheus must run: it is installed, or this is CI (where a
    /// missing package is a failure of the set-up, not a reason to skip).
    static var isRequired: Bool {
        FileManager.default.isExecutableFile(atPath: prometheus)
            && FileManager.default.isExecutableFile(atPath: promtool)
            || ProcessInfo.processInfo.environment["CI"] != nil
    }

    let process: TrellisBinary
    let port: Int
    let directory: String

    /// Starts Prometheus with `configuration` (YAML text; `rules` are written beside it as
    /// `rules.yml`, which the configuration may name) and waits until it is ready. Another process may
    /// take the port between the probe and the bind; such a start is tried again on another port.
    static func start(configuration: String, rules: String) async throws -> PrometheusServer {
        let directory = temporaryDirectory()
        try FileManager.default.createDirectory(atPath: directory + "/data", withIntermediateDirectories: true)
        try configuration.write(toFile: directory + "/prometheus.yml", atomically: true, encoding: .utf8)
        try rules.write(toFile: directory + "/rules.yml", atomically: true, encoding: .utf8)
        var attempt = 0
        while true {
            attempt += 1
            guard let port = PortProbe.freeLoopbackPort() else { throw TimeoutError(message: "no free loopback port") }
            let process = try TrellisBinary.start(
                [
                    "--config.file=\(directory)/prometheus.yml",
                    "--storage.tsdb.path=\(directory)/data",
                    "--web.listen-address=127.0.0.1:\(port)"
                ],
                in: directory, executable: prometheus)
            let server = PrometheusServer(process: process, port: port, directory: directory)
            do {
                try await eventually("Prometheus is ready on 127.0.0.1:\(port)", timeout: .seconds(60)) {
                    guard process.process.isRunning else {
                        throw TimeoutError(message: "Prometheus exited: \(process.output)")
                    }
                    return (try? await MetricsTests.get("http://127.0.0.1:\(port)/-/ready"))?.0 == 200
                }
                return server
            } catch {
                if process.process.isRunning { process.process.signal(SIGKILL) }
                _ = try? await process.waitForExit()
                guard attempt < 5, process.output.contains("address already in use") else {
                    try? FileManager.default.removeItem(atPath: directory)
                    throw error
                }
            }
        }
    }

    /// `GET /api/v1/<path>`'s `data`, or throws with Prometheus's error.
    func api(_ path: String, _ parameters: [String: String] = [:]) async throws -> Any {
        var components = URLComponents(string: "http://127.0.0.1:\(port)/api/v1/\(path)")!
        components.queryItems = parameters.map { URLQueryItem(name: $0.key, value: $0.value) }
        // "+" is a space in a query string; PromQL needs it literally.
        components.percentEncodedQuery = components.percentEncodedQuery?.replacingOccurrences(of: "+", with: "%2B")
        let (status, body) = try await MetricsTests.get(components.url!.absoluteString)
        let answer = try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any]
        guard status == 200, answer?["status"] as? String == "success", let data = answer?["data"] else {
            throw TimeoutError(message: "Prometheus answered \(status) to \(path) \(parameters): \(body)")
        }
        return data
    }

    /// The samples of the instant query `expression` now: each series's labels and value.
    func query(_ expression: String) async throws -> [(labels: [String: String], value: String)] {
        let data = try await api("query", ["query": expression]) as? [String: Any]
        let result = data?["result"] as? [[String: Any]] ?? []
        return result.map { sample in
            ((sample["metric"] as? [String: String]) ?? [:], ((sample["value"] as? [Any])?.last as? String) ?? "")
        }
    }

    /// True when `expression` has at least one sample now that is a number (not NaN).
    func hasData(_ expression: String) async throws -> Bool {
        try await query(expression).contains { $0.value != "NaN" && Double($0.value) != nil }
    }

    /// Waits until Prometheus has scraped the `trellis` job once more than when called.
    func waitForNextScrape(timeout: Duration = .seconds(30)) async throws {
        let before = try await query(#"timestamp(up{job="trellis"})"#).first?.value
        try await eventually("Prometheus scrapes Trellis again", timeout: timeout) {
            let now = try await query(#"timestamp(up{job="trellis"})"#).first?.value
            return now != nil && now != before
        }
    }

    /// Every rule of every group with its health (`ok`, `err`, `unknown` before its first evaluation).
    func ruleHealth() async throws -> [(name: String, health: String)] {
        let data = try await api("rules") as? [String: Any]
        let groups = data?["groups"] as? [[String: Any]] ?? []
        return groups.flatMap { $0["rules"] as? [[String: Any]] ?? [] }.map { rule in
            (rule["name"] as? String ?? "", rule["health"] as? String ?? "")
        }
    }

    /// The alerts pending or firing now: name and state (`pending`, `firing`).
    func alerts() async throws -> [(name: String, state: String)] {
        let data = try await api("alerts") as? [String: Any]
        return (data?["alerts"] as? [[String: Any]] ?? []).map { alert in
            ((alert["labels"] as? [String: String])?["alertname"] ?? "", alert["state"] as? String ?? "")
        }
    }

    /// Stops Prometheus (SIGTERM, then SIGKILL if it lingers) and removes its directory.
    func stop() async {
        if process.process.isRunning { process.process.signal(SIGTERM) }
        _ = try? await process.waitForExit()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Runs `promtool ARGUMENTS` with `input` on its standard input; its exit status and output
    /// (standard output and error together).
    static func promtool(_ arguments: [String], input: String = "") throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: promtool)
        process.arguments = arguments
        let stdin = Pipe()
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("promtool-\(UUID().uuidString).out")
        FileManager.default.createFile(atPath: output.path, contents: nil)
        let handle = try FileHandle(forWritingTo: output)
        defer { try? FileManager.default.removeItem(at: output) }
        process.standardInput = stdin
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        stdin.fileHandleForWriting.write(Data(input.utf8))
        try stdin.fileHandleForWriting.close()
        process.waitUntilExit()
        try handle.close()
        return (process.terminationStatus, (try? String(contentsOf: output, encoding: .utf8)) ?? "")
    }
}
