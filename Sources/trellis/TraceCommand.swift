import TrellisApplication
import ArgumentParser
import Foundation
import TrellisCore

/// `trellis trace`: everything the relay did with one message, from the traffic it keeps.
struct TraceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trace",
        abstract: "Show what Trellis did with a message: its decoding, verdict and replies.",
        discussion: """
            Asks the relay (trellis/request/trace, operators only) for every message it still keeps that ID \
            names: a plant-tracker request's ID, a JSON request's transaction, a client (a per-client topic's \
            client, a plant sender, a sensor address, a device id), a topic, or an event's number as `trellis \
            watch` shows it. Each is printed as `trellis watch` prints it, oldest first, or as JSON with --json. \
            With --dead-letter N the message a dead letter was made of is traced (its topic, received that second). \
            A relay keeps its last 256 messages (within 128 KiB), in memory: a restart forgets them, \
            and in a share group the relay that takes the request answers from its own. Exits 0 when something \
            was found, 1 when nothing kept names it or no relay answered.

            Examples:
              trellis trace 17
              trellis trace bob --json
              trellis trace --dead-letter 42
            """
    )

    @Argument(help: ArgumentHelp("What names the message (see above).", valueName: "id"))
    var id: String?

    @Option(name: .long, help: ArgumentHelp("Trace the message of this dead letter.", valueName: "n"))
    var deadLetter: Int64?

    @OptionGroup var relay: RelayBroker

    @OptionGroup var login: BrokerLogin

    @Flag(name: .long, help: "Print each event as its JSON object, one per line.")
    var json = false

    func validate() throws {
        guard (id == nil) != (deadLetter == nil) else {
            throw ValidationError("name the message: an ID, or --dead-letter N (one of the two)")
        }
    }

    func run() async throws {
        _ = TrellisLogging.bootstrap(level: "error", format: "text")
        let client = try await login.connect(to: relay.broker, as: "trace")
        defer { Task { await client.shutdown() } }
        let query = TraceQuery(client: client)
        let answer: TraceQuery.Answer
        do {
            if let deadLetter {
                guard let letter = try await query.deadLetter(deadLetter) else {
                    throw fail("no dead letter is numbered \(deadLetter)")
                }
                answer = try await query.trace(id: nil, topic: letter.topic, at: letter.at)
            } else {
                answer = try await query.trace(id: id, topic: nil, at: nil)
            }
        } catch let failure as CommandFailure {
            throw failure
        } catch {
            throw fail("\(error)")
        }
        guard !answer.events.isEmpty else {
            throw fail(
                "nothing relay \(answer.relay) keeps names \(id ?? "dead letter \(deadLetter ?? 0)") "
                    + "(it keeps its last \(answer.kept) messages)")
        }
        for event in answer.events {
            print(
                json
                    ? String(decoding: JSONEnvelope.encode(event), as: UTF8.self)
                    : WatchLine.render(event, colour: false))
        }
    }
}
