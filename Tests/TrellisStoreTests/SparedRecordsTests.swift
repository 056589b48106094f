import Foundation
import GRDB
import Testing
import TrellisCore
import TrellisStore
@testable import TrellisStoreSQLite
import TrellisTestSupport

/// ``SparedRecords``: which writes of a batch may be skipped, and how skipping them is told.
@Suite("Spared records of a write-behind batch")
struct SparedRecordsTests {
    @Test("only the ids carried in are spared; the others keep their order, delivery marks included")
    func split() {
        let mark = DeliveryMark(packetID: 7, fingerprint: 9)
        let batch: [BufferedWrite] = [
            .reading(sensor: "s1", moisture: 1, temperature: 2, at: 3),
            .carriedIn(bridge: "cloud", origin: "office:cloud@0a", sequence: 1, forgettingPast: nil),
            .marked(.deviceLog(device: "d", at: 4, type: "info", message: "m", limit: 10), mark),
            .carriedIn(bridge: "cloud", origin: "office:cloud@0a", sequence: 2, forgettingPast: 5),
            .probe(at: 5)
        ]
        let (required, spared) = SparedRecords.split(batch)
        #expect(required.map(Self.kind) == ["reading", "marked", "probe"])
        #expect(spared.map(Self.kind) == ["carriedIn", "carriedIn"])
    }

    @Test("skipped records are logged at once, then at most once a minute with how many since the last line")
    func throttled() {
        let log = CapturedLog()
        let records = SparedRecords(logger: log.logger)
        let start = Date(timeIntervalSince1970: 1_000_000)
        records.skipped(2, because: "no such table: bridge_carried", at: start)
        records.skipped(3, because: "no such table: bridge_carried", at: start.addingTimeInterval(10))
        records.skipped(4, because: "no such table: bridge_carried", at: start.addingTimeInterval(30))
        #expect(log.count(.warning, containing: "could not keep the ids") == 1)
        #expect(log.count(.warning, containing: "skipped=2") == 1)
        #expect(records.skippedSinceLastLine == 7)
        records.skipped(1, because: "no such table: bridge_carried", at: start.addingTimeInterval(61))
        #expect(log.count(.warning, containing: "skipped=8") == 1)
        #expect(records.skippedSinceLastLine == 0)
    }

    @Test("SQLite: a refusal of the statement skips the records; the store's own failures fail the batch")
    func sqliteRefusals() {
        for refused in [ResultCode.SQLITE_ERROR, .SQLITE_CONSTRAINT_TRIGGER, .SQLITE_CONSTRAINT_UNIQUE, .SQLITE_AUTH] {
            #expect(BufferedWrite.refusals.contains(refused.primaryResultCode), "\(refused)")
        }
        for failure in [
            ResultCode.SQLITE_FULL, .SQLITE_BUSY, .SQLITE_LOCKED, .SQLITE_READONLY, .SQLITE_IOERR, .SQLITE_CORRUPT,
            .SQLITE_NOMEM, .SQLITE_INTERRUPT, .SQLITE_CANTOPEN, .SQLITE_NOTADB
        ] {
            #expect(!BufferedWrite.refusals.contains(failure.primaryResultCode), "\(failure)")
        }
    }

    static func kind(_ write: BufferedWrite) -> String {
        switch write {
        case .reading: "reading"
        case .deadLetter: "deadLetter"
        case .marked: "marked"
        case .deviceLog: "deviceLog"
        case .forward: "forward"
        case .carriedIn: "carriedIn"
        case .probe: "probe"
        }
    }
}
