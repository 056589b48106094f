import Synchronization
import TrellisMQTT

/// Where the upstream broker's answers to a forwarder's messages gather, from the client's network
/// thread, until the forwarder takes them. The forwarder is woken only once as many have gathered
/// as its window awaits (``TrellisCore/ForwardWindow/acknowledgementsAwaited``): with the window
/// not blocked, an acknowledgement changes nothing it must do at once, and it takes them whenever
/// it wakes for something else (a commit, a look at the store). A wake per acknowledgement, a task
/// switch per message, was much of the forwarder's cost at a live stream's pace.
final class AcknowledgementInbox: Sendable {
    /// The upstream broker's answer to one message.
    enum Answer: Sendable, Hashable {
        case acknowledged(Int64)
        /// Refused (a reason code of 0x80 or more, or the client could never send it).
        case refused(Int64, MQTTError)
    }

    private struct State {
        var answers: [Answer] = []
        /// How many answers wake the forwarder.
        var awaited = 1
        /// The forwarder was woken and has not taken the answers yet: no second wake.
        var woken = false
    }
    private let state = Mutex(State())
    private let wake: @Sendable () -> Void

    /// - Parameter wake: called once enough have gathered, at most once until the next ``take()``.
    init(wake: @escaping @Sendable () -> Void) {
        self.wake = wake
    }

    /// An answer came (from the client's network thread).
    func add(_ answer: Answer) {
        let due = state.withLock { state in
            state.answers.append(answer)
            guard !state.woken, state.answers.count >= state.awaited else { return false }
            state.woken = true
            return true
        }
        if due { wake() }
    }

    /// Everything gathered so far, oldest first; a wake may come again.
    func take() -> [Answer] {
        state.withLock { state in
            state.woken = false
            defer { state.answers.removeAll(keepingCapacity: true) }
            return state.answers
        }
    }

    /// Sets how many answers wake the forwarder, from what the window now awaits; wakes it at once
    /// when that many have gathered already.
    func await(_ awaited: Int) {
        let due = state.withLock { state in
            state.awaited = max(1, awaited)
            guard !state.woken, state.answers.count >= state.awaited else { return false }
            state.woken = true
            return true
        }
        if due { wake() }
    }
}
