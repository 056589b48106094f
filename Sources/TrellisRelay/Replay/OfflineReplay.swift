import Foundation
import Logging
import TrellisCore
import TrellisStore

/// Replays a capture through the relay's own logic without a broker: each input is processed
/// at the time the capture gives it, and every message Trellis would publish in answer comes
/// out as a capture record stamped with its input's time, so the same capture always gives
/// the same output.
public enum OfflineReplay {
    public struct Outcome: Sendable {
        /// What Trellis would publish, in order.
        public var outputs: [CaptureRecord]
        /// How many records were processed.
        public var processed: Int
        /// How many records were skipped, by reason.
        public var skipped: [ReplaySelection.Skip: Int]

        public var skippedCount: Int { skipped.values.reduce(0, +) }
    }

    /// Runs `records` (those `selection` keeps) through a fresh engine over `store`, then flushes
    /// the store's write-behind buffer.
    public static func run(
        _ records: [CaptureRecord],
        selection: ReplaySelection = ReplaySelection(),
        store: any TrellisStore,
        settings: RelaySettings = RelaySettings(),
        logger: Logger = OfflineReplay.quietLogger
    ) async throws -> Outcome {
        let engine = Relay.engine(store: store, settings: settings, logger: logger)
        let (inputs, skipped) = selection.select(records)
        var outputs: [CaptureRecord] = []
        for input in inputs {
            for message in await engine.process(input.message, at: input.t) {
                var output = CaptureRecord(message, at: input.t)
                output.microseconds = input.microseconds
                outputs.append(output)
            }
        }
        try await store.flush()
        return Outcome(outputs: outputs, processed: inputs.count, skipped: skipped)
    }

    /// A logger that reports only errors, so rejections in a capture do not flood the output.
    public static var quietLogger: Logger {
        var logger = Logger(label: "trellis.replay")
        logger.logLevel = .error
        return logger
    }

    /// Compares replay outputs with the records of a golden file: nil when equal, else a
    /// readable diff. Both sides are compared as canonical capture lines, so spacing and key
    /// order in the golden file do not matter, and times exactly as the capture defines them.
    public static func compare(outputs: [CaptureRecord], golden: [CaptureRecord]) -> String? {
        CaptureDiff.diff(expected: golden.map(\.jsonLine), actual: outputs.map(\.jsonLine))
    }
}
