import Synchronization
import Testing
@testable import TrellisMQTT

/// ``AckTable`` drops an ack without its lock while no task waits for one or may yet register:
/// these check that nothing an announced registration or a waiting task is owed is dropped.
@Suite("The acknowledgement table", .timeLimit(.minutes(1)))
struct AckTableTests {
    /// The orders in which an announced waiter and its ack can meet.
    enum Order: String, CaseIterable, CustomTestStringConvertible {
        /// The ack comes while the registration is announced, before the task waits: it is parked.
        case ackBeforeWait
        /// The task waits first (or the ack is parked while it is about to): either way it gets it.
        case waitBeforeAck

        var testDescription: String { rawValue }
    }

    /// Announces a registration for `mid`, waits for it in a task, delivers `ack` once the task
    /// waits (so the ack finds a waiter, not a registration), and returns what the task got: `ack`
    /// itself unless an earlier ack was (wrongly) kept for it. Nothing is left counted after.
    static func announceWaitAndAck(_ table: AckTable, _ mid: Int32, _ ack: [Int32]) async throws -> [Int32] {
        let waiting = try await startWaiting(table, mid)
        table.complete(mid, with: .success(ack))
        let got = try await waiting.value
        #expect(table.interestCount == 0)
        return got
    }

    /// Announces a registration for `mid` and returns the task waiting for it, once it waits.
    static func startWaiting(_ table: AckTable, _ mid: Int32) async throws -> Task<[Int32], any Error> {
        let before = table.waitingCount
        table.beginRegistration()
        let waiting = Task { try await table.wait(for: mid) }
        while table.waitingCount == before { await Task.yield() }
        return waiting
    }

    @Test("an announced waiter gets its ack, in either order", arguments: Order.allCases)
    func announcedWaiterGetsItsAck(_ order: Order) async throws {
        let table = AckTable()
        switch order {
        case .ackBeforeWait:
            table.beginRegistration()
            table.complete(7, with: .success([1]))
            #expect(try await table.wait(for: 7) == [1])
        case .waitBeforeAck:
            #expect(try await Self.announceWaitAndAck(table, 7, [2]) == [2])
        }
    }

    @Test("an ack no task announced is dropped, not kept for a later registration of the same id")
    func unannouncedAckIsDropped() async throws {
        let table = AckTable()
        table.complete(9, with: .success([1]))
        #expect(
            try await Self.announceWaitAndAck(table, 9, [2]) == [2],
            "the first ack came before anyone registered and must not be handed out")
    }

    @Test("once every waiter has its ack, later acks are dropped and a new waiter still gets its own")
    func afterWaitersAreServed() async throws {
        let table = AckTable()
        for mid in Int32(1)...3 {
            #expect(try await Self.announceWaitAndAck(table, mid, [mid]) == [mid])
            table.complete(mid + 100, with: .success([0])) // no one's: dropped without the lock
        }
    }

    @Test("a registration abandoned before its packet was queued leaves later acks dropped")
    func abandonedRegistration() async throws {
        let table = AckTable()
        table.beginRegistration()
        table.complete(4, with: .success([1])) // parked while the registration is announced
        table.abandonRegistration() // the parked ack goes with it
        #expect(table.interestCount == 0)
        #expect(try await Self.announceWaitAndAck(table, 4, [2]) == [2])
    }

    @Test("shutting down fails a task that waits, and leaves nothing counted")
    func failAllFailsWaiters() async throws {
        let table = AckTable()
        let waiting = try await Self.startWaiting(table, 5)
        table.failAll(MQTTError(kind: .shutDown, message: "the MQTT client was shut down"))
        await #expect(throws: MQTTError.self) { try await waiting.value }
        #expect(table.interestCount == 0)
    }

    @Test("a waiter cancelled is counted no more, and its late ack is dropped")
    func cancelledWaiter() async throws {
        let table = AckTable()
        let waiting = try await Self.startWaiting(table, 6)
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
        #expect(table.interestCount == 0)
        table.complete(6, with: .success([1]))
        #expect(try await Self.announceWaitAndAck(table, 6, [2]) == [2])
    }

    @Test("a callback gets its ack when it is read, at once when it came first, and the shutdown's error")
    func callbackWaiter() {
        let table = AckTable()
        let got = Mutex<[Int32: AckTable.Outcome]>([:])
        // Registered first, then acknowledged.
        table.beginRegistration()
        table.notify(for: 1) { outcome in got.withLock { $0[1] = outcome } }
        #expect(got.withLock { $0[1] } == nil && table.interestCount == 1)
        table.complete(1, with: .success([0]))
        #expect(got.withLock { $0[1] } == .success([0]) && table.interestCount == 0)
        // Acknowledged while announced, before the callback was given: called at once.
        table.beginRegistration()
        table.complete(2, with: .success([0x87]))
        table.notify(for: 2) { outcome in got.withLock { $0[2] = outcome } }
        #expect(got.withLock { $0[2] } == .success([0x87]) && table.interestCount == 0)
        // Still waiting at shutdown: the callback gets the error; one given after it, at once.
        table.beginRegistration()
        table.notify(for: 3) { outcome in got.withLock { $0[3] = outcome } }
        table.failAll(MQTTError(kind: .shutDown, message: "stopped"))
        table.beginRegistration()
        table.notify(for: 4) { outcome in got.withLock { $0[4] = outcome } }
        for mid: Int32 in [3, 4] {
            guard case let .failure(error)? = got.withLock({ $0[mid] }) else {
                Issue.record("no failure for \(mid)")
                continue
            }
            #expect(error.kind == .shutDown)
        }
        #expect(table.interestCount == 0)
    }
}
