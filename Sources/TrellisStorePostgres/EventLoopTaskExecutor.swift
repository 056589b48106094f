import NIOCore
import TrellisCore
import TrellisStore

/// A Swift task executor that runs its jobs on one NIO event loop.
///
/// postgres-nio does its work on the event loop of each connection. Code that awaits a query from
/// elsewhere crosses threads four times per round trip (to a pool thread, to the event loop, and back
/// twice), and each crossing wakes a sleeping thread. A task that prefers the connection's own loop
/// (`withTaskExecutorPreference`) writes the query and reads the answer there, so a round trip costs
/// one crossing each way, besides the server's.
final class EventLoopTaskExecutor: TaskExecutor, Sendable {
    let eventLoop: any EventLoop

    init(_ eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        eventLoop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
