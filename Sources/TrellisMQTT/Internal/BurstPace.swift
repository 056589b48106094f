/// Whether the answers a burst of reads brought about are written as soon as its first message is
/// read, or together once the burst ends: the one rule the network loop keeps about how messages
/// have been arriving.
///
/// Requests that come one at a time (a client waiting for each answer) are answered fastest when
/// the answer leaves right after its request is read, before the loop looks for more with a read
/// that finds nothing and a poll: two system calls the requester would wait through. Requests that
/// come together are answered together, their answers written in one pass after the burst.
///
/// What tells the two apart is the last burst: one message means one at a time. Only messages
/// count. A client answering at QoS 1 gets the broker's acknowledgement of each answer between one
/// request and the next, in a burst of its own or at the head of the next request's; were it
/// counted, requests one at a time at QoS 1 would never be answered at once.
struct BurstPace: Sendable, Equatable {
    /// Messages handed over by the last burst that handed any over; 0 before the first.
    private(set) var lastMessages = 0

    /// A burst of reads ended, having handed `messages` messages to the consumer.
    mutating func burstEnded(handingOver messages: Int) {
        if messages > 0 { lastMessages = messages }
    }

    /// A read of a burst just handed over the burst's `afterMessage`th message (counting from 1;
    /// acknowledgements read before it do not count): whether what it brought about is written
    /// before the burst reads on. Only the first message of a burst that follows a burst of one.
    func writesNow(afterMessage message: Int) -> Bool { message == 1 && lastMessages == 1 }
}
