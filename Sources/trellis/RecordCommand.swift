import TrellisApplication
import ArgumentParser
import Foundation
import Synchronization
import TrellisCore
import TrellisMQTT
import TrellisRelay
import UnixSignals

/// `trellis record`: writes what crosses the broker as a capture, one JSON line per message.
struct RecordCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "record",
        abstract: "Record the messages that cross a broker as a capture file (JSON Lines).",
        discussion: """
            Subscribes to the given topic filters (default `#`) at QoS 2, so each message keeps the QoS it was \
            published with, and writes each message as one line the moment it arrives:

              {"t":"…Z","topic":"rpi/torpi","payload":"…","qos":1,"retain":false}

            `t` is the time of arrival, ISO 8601 UTC with microseconds. `payload_base64` replaces `payload` when \
            the payload is not UTF-8 text, and `properties` holds the v5 response_topic, correlation_data_base64, \
            user_properties and content_type when set. `retain` is true only for retained messages the broker \
            hands over when the subscription starts.

            Every line is written out at once, so Ctrl-C (SIGINT) or SIGTERM leaves a valid file. Without \
            --output the lines go to standard output. Replay the capture with `trellis replay`.

            Example:
              trellis record --broker 127.0.0.1:1883 --topic 'rpi/#' --output session.jsonl
              trellis record --broker mqtts://broker.example --tls-ca ca.crt --topic 'rpi/#' --output session.jsonl

            The capture format is described in docs/record-replay.md in the source tree.
            """
    )

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The broker's address: \(BrokerLogin.addressHelp) (for example 127.0.0.1:1883 or mqtts://broker.example).",
            valueName: "url"))
    var broker: String

    @OptionGroup var login: BrokerLogin

    @Option(
        name: .long,
        help: ArgumentHelp("A topic filter to record; repeat for several (default #).", valueName: "filter"))
    var topic: [String] = []

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The capture file to write (replaced if it exists; default: standard output).", valueName: "file"))
    var output: String?

    @Option(name: .long, help: ArgumentHelp("Stop after this many messages.", valueName: "n"))
    var count: Int?

    func validate() throws {
        if let count, count < 1 { throw ValidationError("--count must be at least 1") }
        for filter in topic where filter.isEmpty { throw ValidationError("--topic must not be empty") }
    }

    func run() async throws {
        _ = TrellisLogging.bootstrap(level: "error", format: "text")
        let sink: FileHandle
        if let output {
            guard FileManager.default.createFile(atPath: output, contents: nil),
                let handle = FileHandle(forWritingAtPath: output)
            else { throw fail("cannot write the capture file \(output)") }
            sink = handle
        } else {
            sink = FileHandle.standardOutput
        }
        let client = try await login.connect(to: broker, as: "record")
        let filters = topic.isEmpty ? ["#"] : topic
        for filter in filters {
            do {
                try await client.subscribe(filter, qos: .exactlyOnce)
            } catch {
                await client.shutdown()
                throw fail("cannot subscribe to \(filter): \(error)")
            }
        }
        note(
            "recording \(filters.joined(separator: " ")) from \(BrokerURL.masked(broker)) to \(output ?? "standard output"); Ctrl-C stops"
        )

        let progress = RecordingProgress()
        let limit = count
        let signals = await UnixSignalsSequence(trapping: .sigint, .sigterm)
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await _ in signals { return }
            }
            group.addTask {
                for await message in client.messages {
                    let line = CaptureRecord(message, at: Date()).jsonLine + "\n"
                    do {
                        try sink.write(contentsOf: Data(line.utf8))
                    } catch {
                        progress.failure.withLock { $0 = "\(error)" }
                        return
                    }
                    let total = progress.recorded.add(1, ordering: .relaxed).newValue
                    if let limit, total >= limit { return }
                }
            }
            await group.next()
            group.cancelAll()
        }
        await client.shutdown()
        try? sink.synchronize()
        if output != nil { try? sink.close() }
        if let problem = progress.failure.withLock({ $0 }) {
            throw fail("cannot write the capture \(output ?? "to standard output"): \(problem)")
        }
        note("recorded \(progress.recorded.load(ordering: .relaxed)) message(s)")
    }
}

/// What the recording task reports back: messages written and a write failure, if any.
private final class RecordingProgress: Sendable {
    let recorded = Atomic<Int>(0)
    let failure = Mutex<String?>(nil)
}
