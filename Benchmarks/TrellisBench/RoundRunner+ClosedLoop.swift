import Foundation
import TrellisMQTT

/// The closed loop, interleaved: one request at a time to each relay, in slices that alternate.
///
/// A closed-loop p50 is the figure a shared machine moves most: a burst of other work that lasts a
/// fraction of a second lands on whichever relay is measured at that moment. Measured whole, one
/// relay's 5,000 requests right after the other's, a burst lands on one relay's whole measurement.
/// So each relay's requests are cut into ``slices`` slices that take turns (the order rotated every
/// slice), every slice begins with ``sliceWarmUp`` requests that are not counted (the caches the
/// other relay cooled), and each relay's percentiles are those of all its slices' requests together:
/// a burst longer than a slice (some 40 ms) lands on both, a shorter one on one slice of ten.
extension RoundRunner {
    /// Slices per relay and measurement.
    static let slices = 10
    /// Requests a slice sends before those it counts.
    static let sliceWarmUp = 20

    /// `closedLoop` requests one at a time to each of `contenders`, interleaved; their figures, in
    /// the order given (which also goes first in the first slice).
    func closedLoop(_ qos: QoS, on contenders: [Contender]) async throws -> [Figures] {
        let name = "QoS \(qos.rawValue)"
        // `closedLoop` counted requests per relay, the remainder of the division spread over the first slices.
        let sizes = (0..<Self.slices).map { closedLoop / Self.slices + ($0 < closedLoop % Self.slices ? 1 : 0) }.filter
        { $0 > 0 }
        var samples = Array(repeating: [Double](), count: contenders.count)
        for index in contenders.indices {
            _ = try await requests(min(200, closedLoop), qos: qos, on: contenders[index])
        }
        // CPU time over the whole interleaving: a relay idles while the others take their turns, and
        // one reading over all its slices has one clock tick of rounding, not one per slice.
        let before = contenders.map { $0.cpuTime() }
        for (slice, size) in sizes.enumerated() {
            for turn in contenders.indices {
                let index = (turn + slice) % contenders.count
                samples[index] += try await requests(Self.sliceWarmUp + size, qos: qos, on: contenders[index])
                    .dropFirst(Self.sliceWarmUp)
            }
        }
        // Every request sent in the interleaving, the slices' warm-ups included.
        let sent = sizes.count * Self.sliceWarmUp + sizes.reduce(0, +)
        return contenders.indices.map { index in
            let all = samples[index]
            var figures = [
                "\(name) latency p50 (µs)": all.percentile(0.5), "\(name) latency p99 (µs)": all.percentile(0.99),
                "\(name) latency max (µs)": all.max() ?? 0
            ]
            if cpuFigures {
                figures.merge(
                    Self.cpuPerRequest(
                        of: contenders[index], since: before[index], requests: sent,
                        label: "\(name) closed loop")
                ) { $1 }
            }
            return figures
        }
    }

    /// `count` requests one at a time to `contender` by the chosen load generator; each round trip in µs.
    private func requests(_ count: Int, qos: QoS, on contender: Contender) async throws -> [Double] {
        let topic = "\(contender.plantPrefix)/torpi", suffix = contender.replySuffix
        switch kind {
        case .swift:
            var load = try await LoadGenerator.connect(
                port: port, id: "bench-closed", replyFilters: ["\(contender.plantPrefix)/fromrpi"])
            let samples = try await load.closedLoop(count: count, qos: qos, topic: topic, suffix: Array(suffix.utf8))
            await load.client.shutdown()
            return samples
        case .c:
            let file = loadgen.work + "/samples-\(UUID().uuidString)"
            defer { unlink(file) }
            _ = try await loadgen.run([
                "\(port)", "req", "\(qos.rawValue)", "\(count)", "1", contender.plantPrefix, suffix, file
            ])
            let text = try String(contentsOfFile: file, encoding: .utf8)
            let samples = text.split(separator: "\n").compactMap { Double($0) }
            guard samples.count == count else {
                throw BenchError("loadgen wrote \(samples.count) of \(count) round trips to \(file)")
            }
            return samples
        }
    }
}
