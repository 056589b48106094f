import Testing
@testable import TrellisMQTT

@Suite("The read-ahead window")
struct ReadAheadWindowTests {
    @Test("reads up to the limit, and writes only when the consumer holds nothing")
    func countLimit() {
        var window = ReadAheadWindow(limit: 3)
        #expect(window.mayRead && window.mayWrite)
        window.delivered(size: 10)
        #expect(window.mayRead)
        #expect(!window.mayWrite)
        window.delivered(size: 10)
        window.delivered(size: 10)
        #expect(!window.mayRead)
        let woke1 = window.handled()
        #expect(woke1, "dropping below the limit lets the loop read again")
        #expect(window.mayRead && !window.mayWrite)
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
        #expect(!window.mayRead)
        let woke5 = window.handled()
        #expect(woke5)
        #expect(window.mayRead)
        window.delivered(size: 60)
        #expect(window.mayRead)
        window.delivered(size: 60)
        #expect(!window.mayRead)
    }

    @Test("without a limit nothing is counted or held back")
    func unlimited() {
        var window = ReadAheadWindow(limit: nil)
        for _ in 0..<1_000 { window.delivered(size: 1 << 20) }
        #expect(window.mayRead && window.mayWrite && window.count == 0)
        let woke6 = window.handled()
        #expect(!woke6)
    }
}
