import TrellisApplication
import ArgumentParser
import Foundation
import TrellisServer
#if canImport(Glibc)
    import Glibc
#endif

/// `trellis health`: asks a running Trellis's probes, for scripts and container `HEALTHCHECK`s.
struct HealthCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "health",
        abstract: "Ask a running Trellis whether it is alive (or, with --ready, ready); exit 0 or 1 with one line.",
        discussion: """
            Without --ready: GET /livez, which answers 200 while the process and its MQTT loop run, whatever \
            the broker and the store are doing. With --ready: GET /readyz, 200 only while the broker is \
            connected, the store is writable and reachable, and the write-behind backlog is under its bounds; \
            the line names what is wrong otherwise. The address is --address, else health.address, else \
            metrics.address of the configuration `trellis run` reads (the file, TRELLIS_… variables). \
            Exits 1 when the answer is not 200 or nothing answers within --timeout seconds.

              HEALTHCHECK CMD ["trellis", "health", "--ready"]
            """
    )

    @Flag(name: .long, help: "Ask /readyz (can it serve) instead of /livez (is it alive).")
    var ready = false

    @Option(
        name: .long,
        help: ArgumentHelp("HOST:PORT or a port on 127.0.0.1 where Trellis serves its probes.", valueName: "address"))
    var address: String?

    @OptionGroup var configFile: ConfigFileOption

    @Option(name: .long, help: "Seconds to wait for the answer (default 3).")
    var timeout: Double = 3

    func run() async throws {
        let text: String
        if let address {
            text = address
        } else {
            let effective = try await configFile.read()
            let health = effective.string("health.address"), metrics = effective.string("metrics.address")
            guard let chosen = [health, metrics].first(where: { !$0.isEmpty }) else {
                throw ValidationError(
                    "no address: pass --address, or set health.address (or metrics.address) as `trellis run` reads it")
            }
            text = chosen
        }
        guard let target = ListenAddress(text) else {
            throw ValidationError("--address \(text): expected \(ListenAddress.expected)")
        }
        let path = ready ? "/readyz" : "/livez"
        do {
            let (status, body) = try HTTPProbe.get(host: target.host, port: target.port, path: path, timeout: timeout)
            print(Self.line(status: status, body: body))
            if status != 200 { throw ExitCode.failure }
        } catch let error as HTTPProbe.Failure {
            print("not answering at \(target.host):\(target.port)\(path): \(error.reason)")
            throw ExitCode.failure
        }
    }

    /// The probe's one line (``Probes/Answer/line``), rebuilt from its JSON; the status code and
    /// body when it is not JSON.
    static func line(status: Int, body: [UInt8]) -> String {
        guard let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any],
            let state = object["status"] as? String
        else {
            return "HTTP \(status): \(String(decoding: body.prefix(200), as: UTF8.self))"
        }
        let checks = object["checks"] as? [String: [String: Any]] ?? [:]
        let failing = checks.filter { ($0.value["ok"] as? Bool) == false }.sorted { $0.key < $1.key }
        guard !failing.isEmpty else { return state }
        return state + ": "
            + failing.map { "\($0.key): \($0.value["error"] as? String ?? "failing")" }.joined(separator: "; ")
    }
}
