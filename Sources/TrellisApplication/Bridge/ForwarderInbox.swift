import Synchronization
import TrellisMQTT

/// What happened for a forwarder since it last looked, gathered from other threads until it takes
/// it: the upstream broker's answers to its messages (from the client's network thread), commits
/// that kept messages for its bridge (from the write-behind) and its look at the store falling due
/// (from its clock). The forwarder is woken once for all that gathered, and only when something
/// asks for it: a commit, a look due, or as many answers as its window awaits
/// (``TrellisCore/ForwardWindow/acknowledgementsAwaited``). With the window not blocked an answer
/// changes nothing it must do at once, and a wake per answer, a task switch per message, was much
/// of the forwarder's cost at a live stream's pace. However long the forwarder is busy, what
/// gathers meanwhile is one wake and one take.
final class ForwarderInbox: Sendable {
    /// The upstream broker's answer to one message.
    enum Answer: Sendable, Hashable {
        case acknowledged(Int64)
        /// Refused (a reason code of 0x80 or more, or the client could never send it).
        case refused(Int64, MQTTError)
    }

    /// What gathered, oldest answer first.
    struct Taken: Sendable, Equatable {
        var answers: [Answer] = []
        /// A batch that kept messages for the bridge committed.
        var kept = false
        /// The look at the store is due.
        var lookDue = false
    }

    private struct State {
        var taken = Taken()
        /// How many answers wake the forwarder.
        var awaited = 1
        /// The forwarder was woken and has not taken what gathered yet: no second wake.
        var woken = false

        /// Whether what gathered now wakes the forwarder (marking it woken).
        mutating func due() -> Bool {
            guard !woken, taken.kept || taken.lookDue || taken.answers.count >= awaited else { return false }
            woken = true
            return true
        }
    }
    private let state = Mutex(State())
    private let wake: @Sendable () -> Void

    /// - Parameter wake: called once something asks for the forwarder, at most once until the next ``take()``.
    init(wake: @escaping @Sendable () -> Void) {
        self.wake = wake
    }

    /// An answer came (from the client's network thread).
    func add(_ answer: Answer) {
        gather { $0.taken.answers.append(answer) }
    }

    /// A batch that kept messages for the bridge committed (from the write-behind).
    func kept() {
        gather { $0.taken.kept = true }
    }

    /// The look at the store fell due (from the forwarder's clock).
    func lookDue() {
        gather { $0.taken.lookDue = true }
    }

    /// Sets how many answers wake the forwarder, from what the window now awaits; wakes it at once
    /// when that many have gathered already.
    func await(_ awaited: Int) {
        gather { $0.awaited = max(1, awaited) }
    }

    /// Applies `change`, and wakes the forwarder when what gathered now asks for it.
    private func gather(_ change: (inout State) -> Void) {
        let due = state.withLock { state in
            change(&state)
            return state.due()
        }
        if due { wake() }
    }

    /// Everything gathered so far; a wake may come again.
    func take() -> Taken {
        state.withLock { state in
            state.woken = false
            defer { state.taken = Taken() }
            return state.taken
        }
    }
}
