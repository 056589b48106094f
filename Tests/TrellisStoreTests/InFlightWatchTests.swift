import Synchronization
import Testing
@testable import TrellisStore

/// The one watch of a store over its operations in flight: a slow operation while the server is
/// unreachable is reported, and its end tells that it saw the outage; a quick one is not.
@Suite("Watching the operations in flight")
struct InFlightWatchTests {
    private struct Unreachable: Error {}

    /// A watch whose server is unreachable, and the reports it makes (whether a slow operation waits).
    /// A report nobody awaits is dropped: the watch repeats it while the operation stays slow.
    private static func watch(slowAfter: Duration) -> (InFlightWatch, AsyncStream<Bool>) {
        let (reports, sink) = AsyncStream.makeStream(of: Bool.self, bufferingPolicy: .bufferingNewest(0))
        let watch = InFlightWatch(slowAfter: slowAfter, reachability: { Unreachable() }) { _, waiting in
            sink.yield(waiting)
        }
        return (watch, reports)
    }

    /// The next report, or nil when none comes within `seconds`.
    private static func nextReport(_ reports: AsyncStream<Bool>, within seconds: Int = 30) async -> Bool? {
        await withTaskGroup(of: Bool?.self) { group in
            group.addTask { await reports.first { _ in true } }
            group.addTask {
                try? await Task.sleep(for: .seconds(seconds))
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }

    @Test("an operation that ends before it is slow sees no outage")
    func quickOperation() {
        let (watch, _) = Self.watch(slowAfter: .seconds(60))
        let ticket = watch.begin(waiting: true)
        #expect(!watch.end(ticket))
    }

    @Test("a slow operation while the server is away is reported, and learns it at its end; so is the next one")
    func slowOperation() async {
        let (watch, reports) = Self.watch(slowAfter: .milliseconds(40))
        let ticket = watch.begin(waiting: true)
        #expect(await Self.nextReport(reports) == true, "the slow operation waits the outage out")
        #expect(watch.end(ticket), "its success is a recovery")
        let next = watch.begin(waiting: false)
        #expect(await Self.nextReport(reports) == false, "a later operation is watched too, after the first ended")
        #expect(watch.end(next))
    }
}
