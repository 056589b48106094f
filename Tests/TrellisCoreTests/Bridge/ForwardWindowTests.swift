import Testing
import TrellisCore

/// The bridge's sending window as a value: what goes in, what comes out.
@Suite("Bridge: the forward window")
struct ForwardWindowTests {
    static func message(_ id: Int64, _ topic: String = "sensors/a") -> ForwardWindow.Message {
        ForwardWindow.Message(id: id, topic: topic, payload: Array("\(id)".utf8), qos: 1, retain: false)
    }

    /// A connected window of `limit` that read messages `ids`, the whole queue, and sent what it could.
    static func sending(_ ids: ClosedRange<Int64>, limit: Int) -> ForwardWindow {
        var window = ForwardWindow(limit: limit)
        _ = window.connect()
        _ = window.read(ids.map { message($0) }, complete: true)
        return window
    }

    static func published(_ actions: [ForwardWindow.Action]) -> [Int64] {
        actions.compactMap { if case let .publish(message, _) = $0 { message.id } else { nil } }
    }

    @Test("nothing is read or sent before the uplink is up; once up, a read, then the window fills in order")
    func startsOnConnect() {
        var window = ForwardWindow(limit: 3)
        #expect(window.stored().isEmpty)
        #expect(window.connect() == [.read(after: 0, limit: 6)])
        let sent = window.read((1...5).map { Self.message($0) }, complete: true)
        #expect(Self.published(sent) == [1, 2, 3])
        #expect(!sent.contains { if case .read = $0 { true } else { false } }, "one read at a time, and nothing more")
        #expect(window.acknowledged(2) == [.delete([2]), .publish(Self.message(4), again: false)])
        #expect(window.inFlight.map(\.id) == [1, 3, 4])
    }

    @Test("the ids a trim spares: in flight, read and waiting, acknowledged until their delete is done")
    func held() {
        var window = ForwardWindow(limit: 2)
        #expect(window.heldIDs.isEmpty)
        _ = window.connect()
        _ = window.read((1...5).map { Self.message($0) }, complete: false)
        #expect(window.acknowledged(1) == [.delete([1]), .publish(Self.message(3), again: false)])
        #expect(window.heldIDs == [2, 3, 4, 5, 1])
        window.deleted([1])
        #expect(window.heldIDs == [2, 3, 4, 5])
    }

    @Test("a delete that failed stays held and goes with the next batch")
    func deleteFailed() {
        var window = Self.sending(1...3, limit: 2)
        #expect(window.acknowledged(1).first == .delete([1]))
        window.deleteFailed([1])
        #expect(window.heldIDs.contains(1), "spared by a trim, not read again")
        #expect(window.acknowledged(2).first == .delete([1, 2]))
        window.deleted([1, 2])
        #expect(!window.heldIDs.contains(1) && !window.heldIDs.contains(2))
    }

    @Test("messages in flight when the uplink drops go again first, in order, marked as sent before")
    func resendsInFlight() {
        var window = Self.sending(1...3, limit: 2)
        window.disconnect()
        #expect(window.acknowledged(9).isEmpty)
        #expect(window.stored().isEmpty, "nothing is read while the uplink is down")
        let again = window.connect()
        #expect(
            Array(again.prefix(2)) == [
                .publish(Self.message(1), again: true), .publish(Self.message(2), again: true)
            ])
        #expect(window.acknowledged(1).prefix(2) == [.delete([1]), .publish(Self.message(3), again: false)])
    }

    @Test("a message stored while a read is under way is read next, not forgotten")
    func storedDuringRead() {
        var window = ForwardWindow(limit: 4)
        #expect(window.connect() == [.read(after: 0, limit: 8)])
        #expect(window.stored().isEmpty, "the read under way is not doubled")
        let sent = window.read([Self.message(1)], complete: true)
        // Something was stored during the read (the look above): the next read is the look's, from the head.
        #expect(sent == [.publish(Self.message(1), again: false), .read(after: 0, limit: 8)])
        let none = window.read([Self.message(1)], complete: true)
        #expect(none.isEmpty, "the store holds only what is in flight: no read until something is stored")
        #expect(window.stored() == [.read(after: 0, limit: 8)])
    }

    @Test("a failed read is tried again on the next event; an id read twice is sent once")
    func readFailure() {
        var window = ForwardWindow(limit: 2)
        _ = window.connect()
        window.readFailed()
        #expect(window.stored() == [.read(after: 0, limit: 4)])
        _ = window.read([Self.message(1)], complete: true)
        #expect(Self.published(window.read([Self.message(1)], complete: true)).isEmpty)
        #expect(window.inFlight.map(\.id) == [1])
    }

    @Test("a message committed after a later one was read (PostgreSQL's ids) goes once the reads have caught up")
    func seenLate() {
        var window = ForwardWindow(limit: 2)
        _ = window.connect()
        // Ids 1 and 3 are visible; 2 was taken first but commits later.
        #expect(Self.published(window.read([Self.message(1), Self.message(3)], complete: true)) == [1, 3])
        #expect(window.acknowledged(1).prefix(1) == [.delete([1])])
        #expect(window.acknowledged(3).prefix(1) == [.delete([3])])
        #expect(window.stored() == [.read(after: 0, limit: 4)])
        #expect(Self.published(window.read([Self.message(2), Self.message(4)], complete: true)) == [2, 4])
    }

    @Test("10,000 messages through a window of 64 with random acknowledgements: each sent once, deleted once, in order")
    func soak() {
        var window = ForwardWindow(limit: 64)
        let store = (1...10_000).map { Self.message(Int64($0), "t\($0 % 7)") }
        var gone: Set<Int64> = []
        var sent: [Int64] = [], deleted: [Int64] = []
        var generator = SystemRandomNumberGenerator()
        var pending = window.connect()
        var rounds = 0
        while rounds < 1_000_000, deleted.count < 10_000 {
            rounds += 1
            var next: [ForwardWindow.Action] = []
            for action in pending {
                switch action {
                case let .read(after, limit):
                    let batch = Array(store[Int(after)...].lazy.filter { !gone.contains($0.id) }.prefix(limit))
                    next += window.read(batch, complete: batch.count < limit)
                case let .publish(message, again):
                    #expect(!again)
                    sent.append(message.id)
                case let .delete(ids):
                    deleted += ids
                    gone.formUnion(ids)
                }
            }
            if next.isEmpty {
                // Acknowledged at random; with nothing in flight, a look at the store deletes the rest.
                next =
                    window.inFlight.randomElement(using: &generator).map { window.acknowledged($0.id) }
                    ?? window.stored()
            }
            pending = next
        }
        #expect(sent == (1...10_000).map(Int64.init), "sent in the store's order, each once")
        #expect(Set(deleted).count == 10_000 && deleted.count == 10_000)
        #expect(gone.count == store.count)
    }

    @Test(
        "acknowledged messages are deleted in batches of half the window, and the rest at the next look or when all is done"
    )
    func deletesInBatches() {
        var window = Self.sending(1...20, limit: 8)
        #expect(window.deleteBatch == 4)
        for id in Int64(1)...3 {
            #expect(!window.acknowledged(id).contains { if case .delete = $0 { true } else { false } })
        }
        // Held until deleted: a read from the queue's head that finds them again does not send them.
        #expect(Self.published(window.read([Self.message(1), Self.message(2)], complete: true)).isEmpty)
        #expect(window.acknowledged(4).first == .delete([1, 2, 3, 4]))
        _ = window.acknowledged(5)
        #expect(window.stored().first == .delete([5]), "each look at the store takes what waits")
        #expect(window.acknowledgedIDs.isEmpty)
    }

    @Test("told that messages were kept, the window reads them and leaves the acknowledged for the next look")
    func keptReadsWithoutDeleting() {
        var window = Self.sending(1...3, limit: 8)
        _ = window.acknowledged(1)
        #expect(window.kept() == [.read(after: 3, limit: 16)], "after the newest id read")
        #expect(window.kept().isEmpty, "the read under way is not doubled")
        // Kept during that read: looked for again once it is done.
        #expect(window.read([], complete: true) == [.read(after: 3, limit: 16)])
        #expect(window.acknowledgedIDs == [1])
        #expect(window.stored().first == .delete([1]))
    }

    @Test("an id whose delete is given out stays held until it is done: a read performed first does not send it again")
    func heldUntilDeleted() {
        var window = Self.sending(1...3, limit: 2)
        #expect(window.acknowledged(1).first == .delete([1]))
        // The driver reads from the queue's head before it has deleted 1: 1 is still in the store.
        #expect(Self.published(window.read([Self.message(1), Self.message(3)], complete: true)).isEmpty)
        window.deleted([1])
        _ = window.acknowledged(2)
        #expect(window.stop() == [], "nothing left: 2 went with its own batch")
        #expect(window.acknowledged(3).first == .delete([3]))
    }

    @Test("when the turn ends, what was acknowledged and not yet deleted is deleted")
    func stopFlushes() {
        var window = Self.sending(1...10, limit: 8)
        _ = window.acknowledged(2)
        _ = window.acknowledged(1)
        #expect(window.stop() == [.delete([2, 1])])
        #expect(window.stop().isEmpty)
    }

    @Test("a live stream reads on after the newest id read; a look at the store reads from the queue's head")
    func readsAfterNewest() {
        var window = Self.sending(1...3, limit: 8)
        #expect(window.kept() == [.read(after: 3, limit: 16)])
        // 5 is visible, 4 not yet (taken first, committed later, as PostgreSQL's ids can be).
        #expect(Self.published(window.read([Self.message(5)], complete: true)) == [5])
        #expect(window.kept() == [.read(after: 5, limit: 16)])
        // 4 is visible now, but below the newest id read: the reads at each commit do not find it.
        #expect(window.read([], complete: true).isEmpty)
        #expect(window.stored() == [.read(after: 0, limit: 16)], "a look reads from the head")
        #expect(Self.published(window.read((1...5).map { Self.message($0) }, complete: true)) == [4])
        #expect(window.kept() == [.read(after: 5, limit: 16)], "and the reads go on after the newest")
    }

    @Test("a message acknowledged at a slow pace is deleted at the next look, not in a transaction of its own")
    func slowPaceDeletesAtLook() {
        var window = Self.sending(1...1, limit: 8)
        #expect(window.acknowledged(1).isEmpty)
        #expect(window.acknowledgedIDs == [1])
        #expect(window.stored().first == .delete([1]))
    }

    @Test("acknowledgements are awaited one at a time while messages wait for room, else until a batch to delete")
    func acknowledgementsAwaited() {
        var window = ForwardWindow(limit: 2)
        _ = window.connect()
        _ = window.read((1...4).map { Self.message($0) }, complete: true)
        #expect(window.acknowledgementsAwaited == 1, "3 and 4 wait for room")
        var roomy = Self.sending(1...3, limit: 8)
        #expect(roomy.acknowledgementsAwaited == 4)
        _ = roomy.acknowledged(1)
        #expect(roomy.acknowledgementsAwaited == 3, "three more complete the batch")
        _ = roomy.acknowledged(2)
        _ = roomy.acknowledged(3)
        #expect(roomy.acknowledgementsAwaited == 1)
        #expect(roomy.acknowledged(4).isEmpty, "not in flight: nothing")
        _ = roomy.stored()
        #expect(roomy.acknowledgementsAwaited == 4)
    }
}
