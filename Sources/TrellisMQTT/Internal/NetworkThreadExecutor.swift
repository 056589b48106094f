import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A task executor whose jobs run on the client's network thread, between two passes of its
/// event loop.
///
/// A consumer that handles messages with this executor preferred answers without a single thread
/// hop: the message is read, handed on and handled, and the reply written, all on one thread, as a
/// C client would do in its callback, but outside the callback (a message the consumer handles in
/// full there is consumed in the callback itself: ``MQTTClient/setMessageCallback(_:)``). Jobs enqueued from another thread
/// (a store write completing, a timer) wake the loop through a pipe. Once the loop has ended, jobs
/// run on a global queue instead, so nothing waits forever for a thread that is gone.
final class NetworkThreadExecutor: TaskExecutor, @unchecked Sendable {
    private struct Queue {
        var jobs: [UnownedJob] = []
        /// A byte is in the pipe and the loop has not drained it yet.
        var wakePending = false
        var finished = false
    }

    private let queue = Mutex(Queue())
    /// The empty buffer ``runJobs()`` swaps in for the queued jobs; only the network thread uses it.
    nonisolated(unsafe) private var spare: [UnownedJob] = []
    /// The network thread's identity, once it runs (0 before); jobs enqueued from it need no wake-up.
    private let thread = Atomic<UInt>(0)
    /// Read end (polled by the loop) and write end of the wake-up pipe.
    let wakeDescriptor: Int32
    private let wakeWriter: Int32

    init() {
        var ends: [Int32] = [-1, -1]
        precondition(
            pipe(&ends) == 0,
            "cannot create the MQTT network thread's wake-up pipe: \(String(cString: strerror(errno)))")
        for end in ends {
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
        }
        wakeDescriptor = ends[0]
        wakeWriter = ends[1]
    }

    deinit {
        if wakeDescriptor >= 0 { close(wakeDescriptor) }
        if wakeWriter >= 0 { close(wakeWriter) }
    }

    /// Called first thing on the network thread.
    func attachCurrentThread() {
        thread.store(Self.currentThreadIdentity, ordering: .releasing)
    }

    /// True on the network thread.
    var isCurrentThread: Bool {
        thread.load(ordering: .acquiring) == Self.currentThreadIdentity
    }

    private static var currentThreadIdentity: UInt {
        #if canImport(Darwin)
            UInt(bitPattern: pthread_self())
        #else
            UInt(pthread_self())
        #endif
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let (finished, wake) = queue.withLock { queue -> (Bool, Bool) in
            if queue.finished { return (true, false) }
            queue.jobs.append(job)
            let wake = !queue.wakePending
            queue.wakePending = true
            return (false, wake)
        }
        if finished {
            runElsewhere(job)
        } else if wake && !isCurrentThread {
            writeWakeByte()
        }
    }

    /// Interrupts the loop's wait, from any thread.
    func wake() {
        let needed = queue.withLock { queue -> Bool in
            defer { queue.wakePending = true }
            return !queue.wakePending
        }
        if needed { writeWakeByte() }
    }

    /// True when jobs are waiting, so the loop must not sleep.
    var hasJobs: Bool { queue.withLock { !$0.jobs.isEmpty } }

    /// Runs the jobs queued so far (not those they enqueue).
    func runJobs() {
        // The queued jobs change places with the empty batch buffer of the last run: neither list
        // is copied, and no buffer is made per run.
        var jobs = spare
        spare = []
        queue.withLock { queue in
            queue.wakePending = false
            swap(&queue.jobs, &jobs)
        }
        let executor = asUnownedTaskExecutor()
        for job in jobs { job.runSynchronously(on: executor) }
        jobs.removeAll(keepingCapacity: true)
        spare = jobs
    }

    /// The loop has ended: run what is left and send later jobs elsewhere.
    func finish() {
        let left = queue.withLock { queue -> [UnownedJob] in
            queue.finished = true
            defer { queue.jobs.removeAll() }
            return queue.jobs
        }
        for job in left { runElsewhere(job) }
    }

    /// Runs `job` on a global queue, for when the network thread is gone.
    private func runElsewhere(_ job: UnownedJob) {
        DispatchQueue.global().async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }

    /// Waits until a wake-up byte arrives or `milliseconds` pass; for when there is no socket.
    func waitForWake(milliseconds: Int32) {
        var descriptor = pollfd(fd: wakeDescriptor, events: Int16(POLLIN), revents: 0)
        if poll(&descriptor, 1, milliseconds) > 0 { drainWakeBytes() }
    }

    /// Empties the wake-up pipe; the loop calls it when a poll found the pipe readable.
    func drainWakeBytes() {
        var buffer = [UInt8](repeating: 0, count: 64)
        while read(wakeDescriptor, &buffer, buffer.count) > 0 {}
    }

    private func writeWakeByte() {
        var byte: UInt8 = 1
        _ = write(wakeWriter, &byte, 1)
    }
}
