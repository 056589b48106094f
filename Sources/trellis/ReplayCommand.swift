import TrellisApplication
import ArgumentParser
import Foundation
import Logging
import TrellisCore
import TrellisMQTT
import TrellisRelay
import TrellisStore
import TrellisStoreSQLite

/// `trellis replay`: publishes a capture to a broker, or runs it through the relay's logic offline.
struct ReplayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Replay a capture against a broker, or offline through Trellis's own logic.",
        discussion: """
            FILE is a capture written by `trellis record` or by `mosquitto_sub -F '%j'` (`-` reads standard input).

            With --broker, the recorded messages are published with their original spacing (--speed 2 replays \
            twice as fast) or back to back (--no-delay), each with its QoS, retain flag and v5 properties, and \
            Trellis running on that broker answers them as it would have. --broker takes the addresses `trellis run` \
            takes (mqtt://HOST[:PORT], mqtts://HOST[:PORT] with --tls-ca, --tls-cert and --tls-key, or HOST:PORT).

            With --offline, no broker is used: each message goes through the relay's logic at the time the \
            capture gives it, against an in-memory state (or the state in --state DIR), with the settings \
            `trellis run` would read (--config or trellis.yaml, then TRELLIS_… variables, such as \
            TRELLIS_PLANT_DIALECT=lossless), and what Trellis would publish is printed in the capture format, each \
            line stamped with the time of its input. The same capture and settings always give the same output. --expect GOLDEN compares that output with a golden file and \
            exits 1 with a diff when they differ.

            Both modes skip what Trellis itself published in the capture (its answers are outputs, not inputs): \
            every topic under trellis/, rpi/fromrpi and rpi/fromrpi/<client>, p2o/buttons/<button>/state, \
            p2o/clients/<client>/connection-response, register-response, unregister-response and button-press \
            (prefixes as configured), and topics an earlier message named as its v5 Response Topic. \
            --include-replies keeps them. --only limits the replay to topics matching the given filters.

            A malformed line is reported with the file name, line number and what is wrong, and the replay stops \
            there (what came before it has been replayed); --skip-bad-lines reports it and goes on.

            Examples:
              trellis replay session.jsonl --broker 127.0.0.1:1883 --no-delay
              trellis replay session.jsonl --offline > expected.jsonl
              trellis replay session.jsonl --offline --expect expected.jsonl

            The capture format and what a replay skips are described in docs/record-replay.md in the source tree.
            """
    )

    @Argument(help: ArgumentHelp("The capture file (`-` for standard input).", valueName: "file"))
    var file: String

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The broker to publish to: \(BrokerLogin.addressHelp); required unless --offline.", valueName: "url"))
    var broker: String?

    @OptionGroup var login: BrokerLogin

    @Option(name: .long, help: ArgumentHelp("Replay this many times faster than recorded (default 1).", valueName: "x"))
    var speed: Double?

    @Flag(name: .long, help: "Publish back to back, without the recorded spacing.")
    var noDelay = false

    @Option(
        name: .long,
        help: ArgumentHelp("Replay only topics matching this filter; repeat for several.", valueName: "filter"))
    var only: [String] = []

    @Flag(name: .long, help: "Also replay what Trellis itself published in the capture.")
    var includeReplies = false

    @Flag(
        name: .long, help: "Run the capture through Trellis's logic without a broker and print what it would publish.")
    var offline = false

    @Option(
        name: .long,
        help: ArgumentHelp(
            "With --offline: compare the output with this golden capture; exit 1 with a diff if they differ.",
            valueName: "golden"))
    var expect: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "With --offline: use (and update) the SQLite state in this directory instead of an empty in-memory one.",
            valueName: "dir"))
    var state: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "With --offline: the YAML configuration to take host name, dialect, prefixes and limits from, read with TRELLIS_… variables as `trellis run` reads it (default: trellis.yaml when present).",
            valueName: "file"))
    var config: String?

    @Flag(name: .long, help: "Report malformed lines and go on instead of stopping at the first.")
    var skipBadLines = false

    func validate() throws {
        if offline {
            if broker != nil { throw ValidationError("--offline and --broker exclude each other") }
            if speed != nil || noDelay {
                throw ValidationError("--speed and --no-delay only apply when replaying to a broker")
            }
            if login.tlsCa != nil || login.tlsCert != nil || login.tlsKey != nil {
                throw ValidationError("--tls-ca, --tls-cert and --tls-key only apply when replaying to a broker")
            }
        } else {
            if broker == nil {
                throw ValidationError(
                    "give --broker URL (mqtt://HOST[:PORT], mqtts://HOST[:PORT] or HOST:PORT), or --offline to replay without a broker"
                )
            }
            if expect != nil || state != nil || config != nil {
                throw ValidationError("--expect, --state and --config only apply with --offline")
            }
            if speed != nil && noDelay { throw ValidationError("--speed and --no-delay exclude each other") }
            if let speed, !(speed > 0 && speed.isFinite) { throw ValidationError("--speed must be a number above 0") }
        }
        for filter in only where filter.isEmpty { throw ValidationError("--only must not be empty") }
    }

    func run() async throws {
        _ = TrellisLogging.bootstrap(level: "error", format: "text")
        let (records, stop) = try CaptureInput.read(file, skipBadLines: skipBadLines)
        if offline {
            try await runOffline(records, stop: stop)
        } else {
            try await runLive(records, stop: stop)
        }
    }

    /// The relay's settings as `trellis run` reads them: the file, then `TRELLIS_…` variables.
    func settings() async throws -> RelaySettings {
        try await EffectiveConfiguration.forCommand(file: config).relaySettings
    }

    private func runLive(_ records: [CaptureRecord], stop: CaptureFileError?) async throws {
        let selection = ReplaySelection(only: only, includeTrellisPublications: includeReplies)
        let (inputs, skipped) = selection.select(records)
        let client = try await login.connect(to: broker ?? "", as: "replay")
        let sent: Int
        do {
            sent = try await LiveReplay.publish(
                inputs, through: client, pacing: noDelay ? .noDelay : .original(speed: speed ?? 1))
        } catch {
            await client.shutdown()
            throw fail("replay stopped: \(error)")
        }
        await client.shutdown()
        print("sent \(sent), skipped \(Self.describe(skipped))")
        if let stop { throw fail("\(stop); replay stopped there (--skip-bad-lines goes on)") }
    }

    private func runOffline(_ records: [CaptureRecord], stop: CaptureFileError?) async throws {
        let outcome = try await replayOffline(records)
        let summary =
            "processed \(outcome.processed), skipped \(Self.describe(outcome.skipped)), \(outcome.outputs.count) output(s)"
        if let stop {
            FileHandle.standardOutput.write(Data(CaptureFile.text(of: outcome.outputs).utf8))
            note(summary)
            throw fail("\(stop); replay stopped there (--skip-bad-lines goes on)")
        }
        guard let expect else {
            FileHandle.standardOutput.write(Data(CaptureFile.text(of: outcome.outputs).utf8))
            note(summary)
            return
        }
        guard let golden = FileManager.default.contents(atPath: expect) else {
            throw fail("cannot read the golden file \(expect): \(unreadableReason(expect))")
        }
        let expected: [CaptureRecord]
        do {
            expected = try CaptureFile.records(of: Array(golden), name: expect).records
        } catch {
            throw fail("the golden file is not a valid capture: \(error)")
        }
        if let diff = OfflineReplay.compare(outputs: outcome.outputs, golden: expected) {
            FileHandle.standardError.write(
                Data("--- \(expect) (expected)\n+++ replay of \(file) (actual)\n\(diff)\n".utf8))
            throw fail("the replay of \(file) does not match \(expect) (\(summary))")
        }
        print("matches \(expect): \(summary)")
    }

    /// What Trellis would publish of `records`, with the settings `trellis run` reads: into the state
    /// `--state` names (changed as a relay would change it, alone), else into a store in memory.
    func replayOffline(_ records: [CaptureRecord]) async throws -> OfflineReplay.Outcome {
        let settings = try await settings()
        var logger = Logger(label: "trellis.replay")
        logger.logLevel = .error
        let replay = { (store: any TrellisStore) in
            try await OfflineReplay.run(
                records,
                selection: ReplaySelection(settings: settings, only: only, includeTrellisPublications: includeReplies),
                store: store, settings: settings, logger: logger)
        }
        let outcome: OfflineReplay.Outcome
        do {
            if let state {
                // A state named is changed as a relay would change it, alone: none may run on it meanwhile.
                outcome = try await StatePlace.sqlite(directory: state).withStore(
                    .changeAlone, owner: "trellis-replay", logger: logger, replay)
            } else {
                let store = try SQLiteStore.inMemory()
                outcome = try await replay(store)
                try await store.close()
            }
        } catch let error as StateAccessError {
            throw fail("cannot replay into the state: \(error)")
        } catch {
            throw fail("offline replay failed: \(error)")
        }
        return outcome
    }

    /// `3 (2 published by Trellis, 1 not matched by --only)`.
    static func describe(_ skipped: [ReplaySelection.Skip: Int]) -> String {
        let total = skipped.values.reduce(0, +)
        let parts = [ReplaySelection.Skip.trellisPublication, .responseTopic, .notSelected].compactMap { reason in
            skipped[reason].map { "\($0) \(reason.rawValue)" }
        }
        return parts.isEmpty ? "\(total)" : "\(total) (\(parts.joined(separator: ", ")))"
    }
}
