import Foundation
import Synchronization
import Testing
@testable import TrellisStore
@testable import TrellisStoreSQLite

/// Records the batches a buffer hands to its sink.
final class BatchLog: Sendable {
    private let batches = Mutex<[[Int]]>([])

    var all: [[Int]] { batches.withLock { $0 } }

    func sink(_ batch: [Int]) async throws {
        batches.withLock { $0.append(batch) }
    }
}

@Suite("WriteBehindBuffer")
struct WriteBehindBufferTests {
    @Test("a full batch is written at once, in order")
    func fullBatch() async throws {
        let log = BatchLog()
        let buffer = WriteBehindBuffer<Int>(batchSize: 256, maxDelay: .seconds(60), sink: log.sink)
        for item in 0..<600 { await buffer.append(item) }
        await buffer.drain()
        let batches = log.all
        #expect(batches.map(\.count) == [256, 256, 88])
        #expect(await buffer.batchesFinished == 3)
        #expect(batches.flatMap { $0 } == Array(0..<600))
    }

    @Test("a partial batch is written after the delay without a flush")
    func timedBatch() async throws {
        let log = BatchLog()
        let buffer = WriteBehindBuffer<Int>(batchSize: 256, maxDelay: .milliseconds(20), sink: log.sink)
        for item in 0..<3 { await buffer.append(item) }
        #expect(await buffer.pendingCount == 3)
        let deadline = ContinuousClock.now.advanced(by: .seconds(30))
        while log.all.isEmpty && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(log.all == [[0, 1, 2]])
        #expect(await buffer.pendingCount == 0)
    }

    @Test("drain writes what is pending and an empty drain writes nothing")
    func drain() async throws {
        let log = BatchLog()
        let buffer = WriteBehindBuffer<Int>(batchSize: 256, maxDelay: .seconds(60), sink: log.sink)
        #expect(await buffer.drain())
        #expect(log.all.isEmpty)
        let position = await buffer.append(7)
        #expect(position == 1)
        #expect(!buffer.isCommitted(through: 1))
        #expect(await buffer.drain())
        #expect(buffer.isCommitted(through: 1))
        #expect(log.all == [[7]])
    }

    @Test("waiting for a pending change starts its batch at once")
    func waitStartsBatch() async throws {
        let log = BatchLog()
        let buffer = WriteBehindBuffer<Int>(batchSize: 256, maxDelay: .seconds(60), sink: log.sink)
        await buffer.append(1)
        let position = await buffer.append(2)
        #expect(await buffer.waitUntilCommitted(through: position))
        #expect(log.all == [[1, 2]])
    }

    @Test("readings recorded in a burst reach the database in few transactions")
    func batchedReadings() async throws {
        try await withSQLiteStore(.inMemory) { store async throws in
            let batchesBefore = await store.buffer.batchesFinished
            for index in 0..<1_000 {
                try await store.recordReading(
                    sensor: "0x\(index % 50)", moisture: index % 10, temperature: 20, at: instant(Double(index)))
            }
            try await store.flush()
            #expect(try await store.counts().sensorReadings == 50)
            let records = try await store.writer.read { db in
                try Int.fetchOne(db, sql: "SELECT moisture FROM sensor_reading WHERE sensor = '0x7'")
            }
            #expect(records == 7)
            let batches = await store.buffer.batchesFinished - batchesBefore
            #expect(batches >= 4 && batches <= 20, "1,000 readings took \(batches) transactions")
        }
    }
}
