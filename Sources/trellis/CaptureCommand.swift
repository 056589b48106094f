import TrellisApplication
import ArgumentParser
import Foundation
import TrellisCore
import TrellisRelay
import TrellisWire

/// `trellis capture`: commands that make capture files from other sources.
struct CaptureCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "capture",
        abstract: "Make capture files for `trellis replay` from other sources.",
        discussion: """
            `trellis capture import` reads MQTT traffic captured on the wire (tcpdump -w, Wireshark, pcap or \
            pcapng) and writes it in the capture format of `trellis record`.
            """,
        subcommands: [CaptureImportCommand.self]
    )
}

/// `trellis capture import`: a pcap or pcapng capture of MQTT traffic as a capture file.
struct CaptureImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Turn a pcap or pcapng capture of MQTT traffic into a capture file (JSON Lines).",
        discussion: """
            FILE is a capture taken on the wire: tcpdump -w, or Wireshark saved as pcap or pcapng (`-` reads \
            standard input, so `tcpdump -w - … | trellis capture import - …` works). Classic pcap (microsecond or \
            nanosecond times, either byte order) and pcapng (several sections and interfaces, each with its own \
            link type and time resolution) are read. Link types: Ethernet (with 802.1Q tags; Linux loopback \
            captures are Ethernet), BSD/macOS loopback (NULL, LOOP), Linux cooked (SLL and SLL2, from \
            tcpdump -i any) and raw IP; IPv4 and IPv6. Any other link type is refused by name.

            Only TCP connections to a --port are read: the broker's ports. Each connection is put back in \
            order per direction (retransmissions and overlaps dropped, early segments held, sequence numbers \
            wrapping); a new SYN on ports in use starts a new connection; a connection the capture joined midway is \
            read from its first whole MQTT packet. MQTT 3.1, 3.1.1 and 5 are read, the version taken from the \
            connection's CONNECT, or from --mqtt-version for connections whose CONNECT was not captured. v5 \
            response topic, correlation data, user properties and content type are kept; topic aliases are \
            resolved per connection and direction. A QoS 2 PUBLISH repeated before its PUBREL, and a QoS 1 DUP \
            copy of a PUBLISH not yet acknowledged, are left out; any other PUBLISH with the DUP flag is kept \
            and reported as a redelivery on standard error.

            What clients published to the broker becomes the capture (--output, default standard output), one \
            line per PUBLISH with the time it was captured and the publisher's client id ("client"). What the \
            broker delivered to clients can become the expected output of an offline replay (--expected): a \
            publish delivered to several subscribers is written once (or only the deliveries to \
            --expected-client), each stamped with the time of the last input before it that a replay replays \
            (as offline replay stamps each output with its input's time), so \
            `trellis replay CAPTURE --offline --expect EXPECTED` compares Trellis's answers with what the \
            original host answered on the wire. The subscriber should subscribe to the answer topics at QoS 2 \
            (and with --retain-as-published for retained answers), so deliveries keep the QoS and retain flag \
            they were published with.

            TLS on a port (a ClientHello) and MQTT over WebSocket are named and refused. A gap (bytes of a packet \
            the capture missed) or a segment cut by the snap length stops that direction of that connection \
            with an error naming the connection and the time; the rest of the file is still read. The exit \
            status is 1 when any problem was reported, after everything readable was written.

            Examples:
              tcpdump -i any -s 0 -w pi.pcapng 'tcp port 1883'
              trellis capture import pi.pcapng --port 1883 -o capture.jsonl --expected answers.jsonl
              trellis replay capture.jsonl --offline --expect answers.jsonl

            Capturing on a Raspberry Pi and making a golden test of it is described in docs/record-replay.md \
            in the source tree.
            """
    )

    @Argument(help: ArgumentHelp("The pcap or pcapng capture (`-` for standard input).", valueName: "file"))
    var file: String

    @Option(
        name: .long,
        help: ArgumentHelp("A TCP port of the broker (repeat for several): connections to it are read.", valueName: "n")
    )
    var port: [UInt16] = []

    @Option(
        name: [.short, .long],
        help: ArgumentHelp(
            "The capture file to write (replaced if it exists; default: standard output).", valueName: "capture.jsonl"))
    var output: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Also write what the broker delivered to clients, as the expected output of `trellis replay --offline --expect`.",
            valueName: "file"))
    var expected: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "With --expected: only the deliveries to this client id (a subscriber that saw every answer).",
            valueName: "id"))
    var expectedClient: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The MQTT version of connections whose CONNECT was not captured: 3.1, 3.1.1 or 5.", valueName: "version"))
    var mqttVersion: String?

    func validate() throws {
        if port.isEmpty { throw ValidationError("give the broker's port with --port N (repeat for several)") }
        if port.contains(0) { throw ValidationError("--port must be 1 to 65535") }
        if let mqttVersion, MQTTWireVersion(rawValue: mqttVersion) == nil {
            throw ValidationError("--mqtt-version must be 3.1, 3.1.1 or 5, not \(mqttVersion)")
        }
        if expectedClient != nil && expected == nil { throw ValidationError("--expected-client needs --expected FILE") }
        if let output, output == expected { throw ValidationError("--output and --expected must be different files") }
    }

    func run() throws {
        let input: FileHandle
        if file == "-" {
            input = FileHandle.standardInput
        } else {
            guard let handle = FileHandle(forReadingAtPath: file) else {
                throw fail("cannot read the capture \(file): \(unreadableReason(file))")
            }
            input = handle
        }
        let outputs = try LineSink(path: output, name: "capture")
        let answers = try expected.map { try LineSink(path: $0, name: "expected output") }
        var importer = WireImport(
            ports: Set(port), assumedVersion: mqttVersion.flatMap(MQTTWireVersion.init(rawValue:)))
        var copies = DeliveryCopies()
        var counts = (inputs: 0, answers: 0, problems: 0)
        // Offline replay stamps each output with the time of its input: an expected line takes the time
        // of the last input replay would replay (not one of Trellis's own publications or a response topic).
        let publications = ReplaySelection().publications
        var responseTopics = Set<String>()
        var lastInput: Int64?
        func take(_ events: [WireImport.Event]) throws {
            for event in events {
                switch event {
                case let .problem(problem):
                    counts.problems += 1
                    FileHandle.standardError.write(Data("trellis: error: \(file): \(problem)\n".utf8))
                case let .message(message):
                    if message.redelivered {
                        warn(
                            "\(message.connection): at \(CaptureTime.format(microseconds: message.record.microseconds)): a PUBLISH on \(message.record.topic) carries the DUP flag: a redelivery, kept"
                        )
                    }
                    if message.direction == .toBroker {
                        counts.inputs += 1
                        try outputs.write(message.record.jsonLine)
                        let topic = message.record.topic
                        if !responseTopics.contains(topic) && !publications.contains(where: { $0.match(topic) != nil })
                        {
                            lastInput = message.record.microseconds
                        }
                        if let responseTopic = message.record.properties.responseTopic {
                            responseTopics.insert(responseTopic)
                        }
                    } else if let answers, expectedClient.map({ $0 == message.clientID }) ?? copies.isFirst(message) {
                        counts.answers += 1
                        var record = message.record
                        record.client = nil
                        record.microseconds = lastInput ?? record.microseconds
                        try answers.write(record.jsonLine)
                    }
                }
            }
        }
        while true {
            let chunk: Data
            do {
                chunk = try input.read(upToCount: 1 << 20) ?? Data()
            } catch {
                throw fail("cannot read the capture \(file): \(error.localizedDescription)")
            }
            if chunk.isEmpty { break }
            try take(importer.push(chunk))
        }
        try take(importer.finish())
        try outputs.close()
        try answers?.close()
        let statistics = importer.statistics
        var summary =
            "imported \(counts.inputs) message(s) from \(statistics.connections) connection(s) in \(statistics.packets) packet(s)"
        if answers != nil { summary += ", \(counts.answers) expected output(s)" }
        if statistics.duplicates > 0 { summary += ", \(statistics.duplicates) duplicate(s) left out" }
        if statistics.redelivered > 0 { summary += ", \(statistics.redelivered) redelivery(ies) kept" }
        if statistics.joinedMidStream > 0 { summary += ", \(statistics.joinedMidStream) connection(s) joined midway" }
        note(summary)
        if counts.problems > 0 {
            throw fail("\(counts.problems) problem(s) in \(file); everything readable was written")
        }
    }
}

/// A capture file written line by line through a buffer, or standard output.
final class LineSink {
    let handle: FileHandle
    let path: String?
    let name: String
    var buffer = Data()

    init(path: String?, name: String) throws {
        self.path = path
        self.name = name
        guard let path else {
            handle = FileHandle.standardOutput
            return
        }
        guard FileManager.default.createFile(atPath: path, contents: nil),
            let handle = FileHandle(forWritingAtPath: path)
        else {
            throw fail("cannot write the \(name) \(path)")
        }
        self.handle = handle
    }

    func write(_ line: String) throws {
        buffer.append(contentsOf: line.utf8)
        buffer.append(0x0A)
        if buffer.count >= 1 << 16 { try flush() }
    }

    func flush() throws {
        do {
            try handle.write(contentsOf: buffer)
        } catch {
            throw fail("cannot write the \(name) \(path ?? "to standard output"): \(error.localizedDescription)")
        }
        buffer.removeAll(keepingCapacity: true)
    }

    func close() throws {
        try flush()
        if path != nil { try? handle.close() }
    }
}
