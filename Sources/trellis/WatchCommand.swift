import TrellisApplication
import ArgumentParser
import Foundation
import TrellisCore
import TrellisMQTT
import UnixSignals

/// `trellis watch`: the traffic Trellis handles, decoded, live.
struct WatchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Show the messages Trellis handles as they come, decoded, with its verdict and replies.",
        discussion: """
            Asks every relay on the broker for its stream of decoded traffic (publishing {"seconds":60} on \
            trellis/watch/request, again every 20 seconds while it runs) and prints one line per message it \
            handles: the time, the service (plant, sensor, buttons, devices or a JSON service), who sent it, the \
            message decoded (a plant-tracker operation with its id, sender and percent-decoded payload; a JSON \
            service's action; a press with how many clients it reached), then → the verdict (answered; error \
            with the ERR_ tag or JSON code; dead_letter with its reason; muted by the spam limit; handled) and \
            the relay and event number; each reply Trellis sent follows on its own line after ↳. The relays \
            stream only while asked (a minute after the last request at most) and at most 500 events a second; \
            a gap is reported on standard error.

            FILTER terms, all kinds of which must hold (terms of one kind are alternatives):
              client:NAME    the per-client topic's client, plant sender, sensor address or device id
              service:NAME   plant, sensor, buttons, devices, fleet, catalog, browse, deadletters, …
              topic:FILTER   an MQTT topic filter; a bare FILTER is the same
              verdict:WORD   \(WatchFilter.verdicts.joined(separator: ", ")) (refused: all but answered and handled)

            The stream is on trellis/watch/events, readable by operators only, so this logs in as an operator: \
            on a loopback broker the local operator `trellis run` keeps, else the account given. Ctrl-C stops.

            Examples:
              trellis watch
              trellis watch service:plant verdict:refused
              trellis watch --json client:bob > bob.jsonl
            """
    )

    @Argument(help: ArgumentHelp("Terms that choose the messages shown (see above).", valueName: "filter"))
    var filter: [String] = []

    @OptionGroup var relay: RelayBroker

    @OptionGroup var login: BrokerLogin

    @Flag(name: .long, help: "Print each event as its JSON object, one per line (docs/watch.md lists the fields).")
    var json = false

    @Option(
        name: .long,
        help: ArgumentHelp("Colours: auto (when standard output is a terminal), always or never.", valueName: "when"))
    var color = "auto"

    @Option(name: .long, help: ArgumentHelp("Stop after this many lines.", valueName: "n"))
    var count: Int?

    func validate() throws {
        guard ["auto", "always", "never"].contains(color) else {
            throw ValidationError("--color must be auto, always or never")
        }
        if let count, count < 1 { throw ValidationError("--count must be at least 1") }
        do {
            _ = try WatchFilter(parsing: filter)
        } catch {
            throw ValidationError("\(error)")
        }
    }

    func run() async throws {
        _ = TrellisLogging.bootstrap(level: "error", format: "text")
        let terms = try WatchFilter(parsing: filter)
        let colour = color == "always" || (color == "auto" && !json && isatty(STDOUT_FILENO) == 1)
        let client = try await login.connect(to: relay.broker, as: "watch")
        let session = WatchSession(
            client: client, printer: WatchPrinter(trellisPrefix: "trellis", filter: terms, json: json, colour: colour),
            limit: count)
        let signals = await UnixSignalsSequence(trapping: .sigint, .sigterm)
        do {
            try await session.run(until: signals)
        } catch {
            await client.shutdown()
            throw fail("\(error)")
        }
        await client.shutdown()
    }
}
