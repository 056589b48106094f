import Testing
@testable import TrellisMQTT

@Suite("The read-ahead window")
struct ReadAheadWindowTests {
    @Test("reads up to the limit, and writes only when the consumer holds nothing")
    func countLimit() {
        var window = ReadAheadWindow(limit: 3)
        #expect(window.mayRead(writesPending: false) && window.mayWrite)
        window.delivered(size: 10)
        #expect(window.mayRead(writesPending: false))
        #expect(!window.mayWrite)
        window.delivered(size: 10)
        window.delivered(size: 10)
        #expect(!window.mayRead(writesPending: false))
        let woke1 = window.handled()
        #expect(woke1, "dropping below the limit lets the loop read again")
        #expect(window.mayRead(writesPending: false) && !window.mayWrite)
        let woke2 = window.handled()
        #expect(!woke2, "still below the limit and still holding: nothing new")
        let woke3 = window.handled()
        #expect(woke3, "holding nothing lets the loop write")
        #expect(window.mayWrite && window.count == 0 && window.bytes == 0)
        let woke4 = window.handled()
        #expect(!woke4, "a report with nothing held changes nothing")
    }

    @Test("past the byte limit no second message is read, but one always is")
    func byteLimit() {
        var window = ReadAheadWindow(limit: 10, byteLimit: 100)
        window.delivered(size: 1_000)
        #expect(!window.mayRead(writesPending: false))
        let woke5 = window.handled()
        #expect(woke5)
        #expect(window.mayRead(writesPending: false))
        window.delivered(size: 60)
        #expect(window.mayRead(writesPending: false))
        window.delivered(size: 60)
        #expect(!window.mayRead(writesPending: false))
    }

    @Test("while writes wait for a held message nothing more is read; holding nothing, reading goes on")
    func writesPendingStopReading() {
        var window = ReadAheadWindow(limit: 32)
        #expect(window.mayRead(writesPending: true), "nothing held: writes go out, reading goes on")
        window.delivered(size: 10)
        #expect(window.mayRead(writesPending: false))
        #expect(!window.mayRead(writesPending: true), "a held message's acknowledgement waits: read no more")
        let woke = window.handled()
        #expect(woke)
        #expect(window.mayRead(writesPending: true))
        let unlimited = ReadAheadWindow(limit: nil)
        #expect(unlimited.mayRead(writesPending: true))
    }

    @Test("a burst of reads fills the window whatever acknowledgements it queued, and stops at the limit")
    func burst() {
        var window = ReadAheadWindow(limit: 3, byteLimit: 100)
        #expect(window.mayRead(writesPending: false), "a burst begins only when reading is allowed")
        window.delivered(size: 10)
        #expect(!window.mayRead(writesPending: true), "between bursts, queued acknowledgements stop reading")
        #expect(window.mayContinueBurst(read: 1), "within the burst they do not")
        window.delivered(size: 10)
        #expect(window.mayContinueBurst(read: 2))
        window.delivered(size: 10)
        #expect(!window.mayContinueBurst(read: 3), "the window is full")
        var heavy = ReadAheadWindow(limit: 10, byteLimit: 100)
        heavy.delivered(size: 150)
        #expect(!heavy.mayContinueBurst(read: 1), "past the byte limit")
        let unlimited = ReadAheadWindow(limit: nil)
        #expect(!unlimited.mayContinueBurst(read: 1), "without a window, one read per pass")
        var drained = ReadAheadWindow(limit: 3)
        for read in 1...3 {
            drained.delivered(size: 10)
            _ = drained.handled()
            #expect(
                drained.mayContinueBurst(read: read) == (read < 3),
                "a consumer on another thread making room does not stretch a burst")
        }
    }

    @Test("without a limit nothing is counted or held back")
    func unlimited() {
        var window = ReadAheadWindow(limit: nil)
        for _ in 0..<1_000 { window.delivered(size: 1 << 20) }
        #expect(window.mayRead(writesPending: false) && window.mayWrite && window.count == 0)
        let woke6 = window.handled()
        #expect(!woke6)
    }

    @Test(
        "messages held across a lost connection hold nothing back on the next one but take its room, and their reports change nothing"
    )
    func connectionClosed() {
        var window = ReadAheadWindow(limit: 2, byteLimit: 100)
        window.delivered(size: 60)
        window.delivered(size: 60)
        #expect(!window.mayWrite && !window.mayRead(writesPending: true))
        window.connectionClosed()
        #expect(window.mayWrite, "the new connection's CONNECT and keepalives are written")
        #expect(window.mayRead(writesPending: true), "its CONNACK is read")
        #expect(window.count == 2 && window.live == 0)
        window.delivered(size: 60)
        #expect(!window.mayWrite, "a message of the new connection holds its acknowledgement")
        #expect(
            !window.mayRead(writesPending: false),
            "the old messages still take room: reconnections cannot pile messages up")
        #expect(!window.mayContinueBurst(read: 1))
        _ = window.handled()
        _ = window.handled()
        #expect(
            !window.mayWrite && window.live == 1 && window.bytes == 60,
            "the old messages' reports leave the new one held")
        let woke = window.handled()
        #expect(woke && window.mayWrite && window.count == 0 && window.bytes == 0)
    }
}
