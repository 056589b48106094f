import Testing

@testable import TrellisMQTT

/// When a burst's answers are written (``BurstPace``): at once after the first message of a burst
/// that followed a burst of one message, whatever acknowledgements came between.
@Suite("The pace of bursts")
struct BurstPaceTests {
    @Test("before any burst, and after a burst of several messages, answers wait for the burst's end")
    func waitsUnlessOneAtATime() {
        var pace = BurstPace()
        #expect(!pace.writesNow(afterMessage: 1), "nothing is known of the pace before the first burst")
        pace.burstEnded(handingOver: 1)
        #expect(pace.writesNow(afterMessage: 1))
        #expect(!pace.writesNow(afterMessage: 2), "a second message in the burst: they came together")
        pace.burstEnded(handingOver: 5)
        #expect(!pace.writesNow(afterMessage: 1), "requests in flight together are answered together")
        pace.burstEnded(handingOver: 1)
        #expect(pace.writesNow(afterMessage: 1))
    }

    @Test("requests one at a time at QoS 1: the acknowledgement of each answer, in a burst of its own, changes nothing")
    func acknowledgementBurstsDoNotCount() {
        var pace = BurstPace()
        for _ in 0..<3 {
            pace.burstEnded(handingOver: 1) // the request, answered
            pace.burstEnded(handingOver: 0) // the broker's PUBACK of the answer
            #expect(pace.writesNow(afterMessage: 1))
        }
        pace.burstEnded(handingOver: 8)
        pace.burstEnded(handingOver: 0)
        #expect(!pace.writesNow(afterMessage: 1), "an acknowledgement does not end a pipelined pace either")
    }
}
