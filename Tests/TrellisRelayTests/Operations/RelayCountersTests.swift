import Testing
import TrellisRelay

/// The running figures behind `trellis/stats`: each kind of count per label value, the plain
/// counts, and the handler latency percentiles over the latest messages.
@Suite("Relay counters")
struct RelayCountersTests {
    @Test("each figure is counted per label value, apart from the others")
    func perLabel() {
        let counters = RelayCounters()
        counters.received(service: "plant")
        counters.received(service: "plant")
        counters.received(service: "buttons")
        counters.published(service: "plant", reply: "RES_numPlants")
        counters.published(service: "plant", reply: "ERR_hashLength")
        counters.published(service: "buttons", reply: nil)
        counters.deadLetter(reason: "unknown_topic")
        counters.deadLetter(reason: "unknown_topic")
        counters.deadLetter(reason: "ERR_hashLength")

        let snapshot = counters.snapshot()
        #expect(snapshot.received == ["plant": 2, "buttons": 1])
        #expect(snapshot.published == ["plant": 2, "buttons": 1])
        #expect(snapshot.replies == ["RES_numPlants": 1, "ERR_hashLength": 1])
        #expect(snapshot.deadLetters == ["unknown_topic": 2, "ERR_hashLength": 1])
        #expect(snapshot.reconnects == 0 && snapshot.redeliveries == 0)
    }

    @Test(
        "counts stay right when values alternate, repeat, and new ones grow the table between them",
        arguments: [1, 2, 50])
    func repeatsAndGrowth(distinct: Int) {
        let counters = RelayCounters()
        var received: [String: Int] = [:]
        var replies: [String: Int] = [:]
        for _ in 0..<3 {
            for index in 0..<distinct {
                for _ in 0...(index % 3) {
                    counters.received(service: "s\(index)")
                    received["s\(index)", default: 0] += 1
                }
                counters.received(service: "plant")
                received["plant", default: 0] += 1
                counters.published(service: "plant", reply: index.isMultiple(of: 2) ? "RES_x" : "ERR_y\(index)")
                replies[index.isMultiple(of: 2) ? "RES_x" : "ERR_y\(index)", default: 0] += 1
            }
        }
        let snapshot = counters.snapshot()
        #expect(snapshot.received == received)
        #expect(snapshot.replies == replies)
        #expect(snapshot.published == ["plant": 3 * distinct])
    }

    @Test("a reply's tag given as UTF-8 bytes counts with the same tag given as a string")
    func replyTagBytes() {
        let counters = RelayCounters()
        let wire = Array("xxRES_x".utf8)
        counters.published(service: "plant", replyUTF8: wire[2...])
        counters.published(service: "plant", reply: "RES_x")
        counters.published(service: "plant", replyUTF8: Array("ERR_y".utf8)[...])
        counters.published(service: "plant", replyUTF8: wire[2...])
        counters.published(service: "plant", replyUTF8: wire[3...])
        counters.published(service: "buttons", replyUTF8: nil)
        let snapshot = counters.snapshot()
        #expect(snapshot.replies == ["RES_x": 3, "ERR_y": 1, "ES_x": 1])
        #expect(snapshot.published == ["plant": 5, "buttons": 1])
    }

    @Test("reconnects and redeliveries are plain counts")
    func plainCounts() {
        let counters = RelayCounters()
        counters.reconnected()
        counters.redelivered()
        counters.redelivered()
        let snapshot = counters.snapshot()
        #expect(snapshot.reconnects == 1)
        #expect(snapshot.redeliveries == 2)
        #expect(snapshot.received.isEmpty && snapshot.deadLetters.isEmpty)
    }

    @Test("latency percentiles come from the latest 1,024 handler runs")
    func latency() {
        let counters = RelayCounters()
        #expect(counters.snapshot().handlerLatencyP50Microseconds == 0, "no runs yet")
        for micros in 1...100 { counters.handled(in: .microseconds(micros)) }
        #expect(counters.snapshot().handlerLatencyP50Microseconds == 51)
        #expect(counters.snapshot().handlerLatencyP99Microseconds == 100)
        for _ in 0..<1_024 { counters.handled(in: .microseconds(7)) }
        #expect(counters.snapshot().handlerLatencyP99Microseconds == 7, "older runs have left the ring")
    }
}
