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
        let answer = HTTPProbe.ask(host: target.host, port: target.port, ready: ready, timeout: timeout)
        print(answer.line)
        if !answer.healthy { throw ExitCode.failure }
    }
}
