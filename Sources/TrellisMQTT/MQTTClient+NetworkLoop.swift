import CMosquitto

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension MQTTClient {
    /// The body of the network thread: connect; then, over and over, run the jobs of the tasks
    /// that prefer this thread (``taskExecutor``), wait for the socket or a wake-up, read while
    /// the consumer's window allows, write what is queued and keep the connection alive. On any
    /// failure it waits and reconnects as ``ConnectionAttempts`` decides, until `shutdown()`.
    func runNetworkLoop() {
        executor.attachCurrentThread()
        var attempts = ConnectionAttempts(reconnectDelay: configuration.reconnectDelay, handshakeLimit: handshakeLimit)
        // Whether `connect()` stored the host, port and CONNECT properties (it does before it connects,
        // so even a failed attempt did unless its arguments were refused): `reconnect()` from then on.
        var stored = false
        while !state.withLock({ $0.stopping }) {
            beat()
            executor.runJobs()
            finishStreamIfStopped()
            if !attempts.isOpen {
                // What the consumer still holds came on a connection that is gone: the new one must
                // connect, read and write without waiting for it (``ReadAheadWindow/connectionClosed()``).
                state.withLock { $0.window.connectionClosed() }
                transportSeen.store(false, ordering: .relaxed)
                carryOut(attempts.attempting())
                let rc = stored ? handle.reconnect() : handle.connect()
                stored = stored || rc != Int32(MOSQ_ERR_INVAL.rawValue)
                let connections = state.withLock { $0.connections }
                carryOut(
                    rc == Mosquitto.success
                        ? attempts.opened(at: .now, connections: connections) : attempts.openFailed(code: rc))
                if !attempts.isOpen { continue }
            }
            let rc = servicePass()
            // Looked at after each pass until seen (a system call a pass while connecting).
            if !transportSeen.load(ordering: .relaxed) && handle.transportConnected {
                transportSeen.store(true, ordering: .relaxed)
            }
            let actions = attempts.serviced(
                code: rc, at: .now, connections: { state.withLock { $0.connections } },
                stopping: { state.withLock { $0.stopping } },
                refusal: {
                    state.withLock { state in
                        defer { state.refusal = nil }; return state.refusal
                    }
                }, transportMade: { transportSeen.load(ordering: .relaxed) })
            if !carryOut(actions) { break }
        }
        if attempts.isOpen && !writesHeld {
            // Write what is queued and a DISCONNECT last, without reading: anything read now would be
            // acknowledged and then dropped, while unread messages stay in the broker's session.
            // With messages still held nothing is written, so none of theirs is acknowledged.
            if state.withLock({ $0.connected }) { _ = handle.disconnect() }
            var writes = 0
            while handle.wantsWrite() && writes < 100 {
                if writeQueued() != Mosquitto.success { break }
                writes += 1
            }
        }
        markDisconnected(reason: "client shut down")
        executor.finish()
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.loopFinished = true
            defer { state.stopWaiters.removeAll() }
            return state.stopWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// One pass over an open connection, under the rules of ``ReadAheadWindow``: writes what is
    /// queued unless the consumer holds a message, waits (at most a second, not at all while jobs
    /// wait) for the socket or the executor's wake-up pipe, reads when the window allows, and
    /// sends a keepalive when one is due. Writing comes first, so the answers and acknowledgements
    /// of a handled batch leave before more is read.
    private func servicePass() -> Int32 {
        let socket = handle.socket
        guard socket >= 0 else { return Mosquitto.noConnection }
        if !writesHeld && handle.wantsWrite() {
            let rc = writeQueued()
            if rc != Mosquitto.success { return rc }
        }
        let pending = handle.wantsWrite()
        let (writing, reading) = flowControl(writesPending: pending)
        var events: Int16 = reading ? Int16(POLLIN) : 0
        if writing && pending { events |= Int16(POLLOUT) }
        var descriptors = [
            pollfd(fd: socket, events: events, revents: 0),
            pollfd(fd: executor.wakeDescriptor, events: Int16(POLLIN), revents: 0)
        ]
        let ready = waitForEvents(&descriptors)
        if ready < 0 && errno != EINTR { return Int32(MOSQ_ERR_ERRNO.rawValue) }
        if descriptors[1].revents & Int16(POLLIN) != 0 { executor.drainWakeBytes() }
        let returned = descriptors[0].revents
        if returned & Int16(POLLIN) != 0 || (reading && returned & Int16(POLLHUP | POLLERR) != 0) {
            let rc = readBurst()
            if rc != Mosquitto.success { return rc }
        } else if returned & Int16(POLLHUP | POLLERR) != 0 {
            // Closed while the window is full: reading now would take a message past the window.
            return Int32(MOSQ_ERR_CONN_LOST.rawValue)
        }
        if returned & Int16(POLLOUT) != 0 && !writesHeld {
            let rc = writeQueued()
            if rc != Mosquitto.success { return rc }
        }
        return handle.loopMisc()
    }

    /// Polls `descriptors`: not at all while jobs wait, otherwise for up to a second. Before it
    /// blocks after a QoS 0 message, the thread gives up its core once and looks again. The broker
    /// and the load that feeds it usually share the machine's few cores with the relay, and the
    /// next message is often on its way as the last one is answered: yielding lets it arrive, where
    /// going to sleep would make the broker pay for waking this thread on every message. After a
    /// QoS 1 message the next packet is the broker's acknowledgement of the answer, which nothing
    /// waits for, while the broker and the requester need the cores for the answer itself: a
    /// thread that yields and looks again there made the answer slower (7% at the p50 of requests
    /// one at a time, `Benchmarks/compare.sh`), so it sleeps at once. Two system calls per wait,
    /// only when nothing was ready.
    private func waitForEvents(_ descriptors: inout [pollfd]) -> Int32 {
        let ready = poll(&descriptors, 2, 0)
        guard ready == 0, !executor.hasJobs else { return ready }
        guard lastMessageAtMostOnce.load(ordering: .relaxed) else { return poll(&descriptors, 2, 1000) }
        sched_yield()
        let again = poll(&descriptors, 2, 0)
        guard again == 0 else { return again }
        return poll(&descriptors, 2, 1000)
    }

    /// Reads a packet, and more while the window has room (``ReadAheadWindow/mayContinueBurst(read:)``)
    /// and either the last read handed the consumer a message or the socket has bytes waiting:
    /// messages that arrived together are handled together, their answers written together, with
    /// one wait on the socket instead of one per message. The broker's acknowledgements of the
    /// client's own QoS 1 publishes arrive between the messages; ending the burst at each of them
    /// would cut a burst into messages handled one at a time, and a consumer whose store batches
    /// its round trips (a shared store's spam admissions) would make one round trip per message.
    /// A burst reads at most 256 packets, so writes and keepalives still get their turn.
    ///
    /// After a burst of one message (requests that come one at a time; bursts of acknowledgements
    /// alone do not count, ``BurstPace``), what the burst's first message brought about in the
    /// callback (``setMessageCallback(_:)``) is written as soon as it is read, before the burst reads
    /// on (an acknowledgement read before it in the same burst changes nothing), rather than after a
    /// read that finds nothing. After a longer burst (requests in flight together) the answers stay
    /// together.
    private func readBurst() -> Int32 {
        let (first, pace) = state.withLock { ($0.delivered, $0.pace) }
        defer { state.withLock { $0.pace.burstEnded(handingOver: $0.delivered - first) } }
        var seen = first
        var reads = 0
        while true {
            let rc = handle.loopRead()
            guard rc == Mosquitto.success else { return rc }
            reads += 1
            let (more, delivered) = state.withLock { state -> (Bool, Bool) in
                defer { seen = state.delivered }
                return (
                    !state.receiveStopped && state.window.mayContinueBurst(read: state.delivered - first),
                    state.delivered > seen
                )
            }
            guard more, reads < Self.burstPacketLimit else { return rc }
            if delivered && pace.writesNow(afterMessage: seen - first) && handle.wantsWrite() && !writesHeld {
                let written = writeQueued()
                guard written == Mosquitto.success else { return written }
            }
            if !delivered && !socketReadable() { return rc }
        }
    }

    /// The most packets one burst reads.
    static var burstPacketLimit: Int { 256 }

    /// True when the socket has bytes to read now (a poll that does not wait).
    private func socketReadable() -> Bool {
        var descriptor = pollfd(fd: handle.socket, events: Int16(POLLIN), revents: 0)
        return poll(&descriptor, 1, 0) > 0 && descriptor.revents & Int16(POLLIN) != 0
    }

    /// How long a connection may take from the TCP connect to the CONNACK (TLS handshake
    /// included) before it is given up and tried again: a broker that accepts the connection and
    /// then says nothing is retried like an unreachable one instead of waiting forever.
    var handshakeLimit: Duration { .seconds(max(5, configuration.keepAlive)) }

    /// Why an attempt failed, in words: the address, libmosquitto's code and, for TLS, what
    /// OpenSSL said about the certificates (see ``ConnectionFailure``).
    private func failureReason(_ rc: Int32, afterOpen: Bool) -> String {
        let scheme = configuration.tls == nil ? "mqtt" : "mqtts"
        let errors = handle.takeErrors()
        let detail =
            rc == Int32(MOSQ_ERR_KEEPALIVE.rawValue)
            ? (transportSeen.load(ordering: .relaxed)
                ? "no answer within \(handshakeLimit) of connecting (\(configuration.tls == nil ? "no CONNACK" : "no TLS handshake or CONNACK"))"
                : "no TCP connection within \(ConnectionAttempts.transportLimit) (the broker's host is gone, or packets to it are dropped)")
            : ConnectionFailure.describe(
                code: rc, libraryText: Mosquitto.describe(rc), errors: errors, host: configuration.host,
                tls: configuration.tls != nil, afterOpen: afterOpen,
                clientCertificate: configuration.tls?.certificate != nil)
        return "cannot connect to the broker at \(scheme)://\(configuration.address): \(detail)"
    }

    /// Carries out what ``ConnectionAttempts`` decided; false when the loop is to end.
    @discardableResult
    private func carryOut(_ actions: [ConnectionAttempts.Action]) -> Bool {
        for action in actions {
            switch action {
            case let .keepLibraryLog(keep):
                handle.keepLibraryLog(keep)
            case .discardLibraryErrors:
                _ = handle.takeErrors()
            case let .reportInvalidSettings(code):
                emit(.connectFailed(reason: Mosquitto.describe(code), retryIn: 0))
                logger.error("invalid MQTT connection settings: \(Mosquitto.describe(code))")
            case let .reportConnectFailed(code, afterOpen, delay):
                // Says why (OpenSSL's reason, a refused certificate), not only that the link closed.
                emit(.connectFailed(reason: failureReason(code, afterOpen: afterOpen), retryIn: delay))
            case let .reportRefused(reason, delay):
                emit(.connectFailed(reason: "the broker refused the connection: \(reason)", retryIn: delay))
            case let .markDisconnected(code):
                markDisconnected(reason: Mosquitto.describe(code))
            case let .pause(seconds):
                pause(seconds: seconds)
            case .stop:
                return false
            }
        }
        return true
    }

    /// Waits on the network thread between connection attempts, still running the jobs of the
    /// tasks that prefer it; `shutdown()` cuts the wait short.
    private func pause(seconds: Double) {
        let clock = ContinuousClock()
        let deadline = clock.now + .milliseconds(Int(seconds * 1000))
        while !state.withLock({ $0.stopping }) {
            beat()
            executor.runJobs()
            let remaining = clock.now.duration(to: deadline)
            if remaining <= .zero { break }
            if executor.hasJobs { continue }
            let milliseconds = min(1000, (remaining / .milliseconds(1)).rounded(.up))
            executor.waitForWake(milliseconds: Int32(milliseconds))
        }
    }

    private func markDisconnected(reason: String) {
        let wasConnected = state.withLock { state in
            defer {
                state.connected = false
                state.ready = false
                state.pendingResubscriptions.removeAll()
            }
            return state.connected
        }
        if wasConnected { emit(.disconnected(reason: reason)) }
    }

    /// CONNACK arrived: on success, resubscribe everything. The connection counts as up (the
    /// `connected` event, `isConnected`, `waitUntilConnected`) only once the broker has
    /// acknowledged every resubscription: on a fresh session, a message published before that
    /// would not be routed to this client at all.
    func didConnect(reason: Int32, sessionPresent: Bool) {
        guard reason == 0 else {
            // The broker closes the connection after a refusal. The loop reports it with the broker's
            // reason (rather than as a bare closed connection), then waits and retries.
            let text = Mosquitto.describeReason(reason)
            state.withLock { $0.refusal = text }
            return
        }
        let subscriptions = state.withLock { state in
            state.connected = true
            state.ready = false
            state.connections += 1
            state.sessionResumed = sessionPresent
            return Array(state.subscriptions.values)
        }
        var pending: Set<Int32> = []
        for subscription in subscriptions.sorted(by: { $0.filter < $1.filter }) {
            let (rc, mid) = handle.subscribe(subscription)
            if rc == Mosquitto.success {
                pending.insert(mid)
            } else {
                logger.error("resubscribing to \(subscription.filter) failed: \(Mosquitto.describe(rc))")
            }
        }
        // SUBACKs are read by this same thread after this callback returns, so none is missed.
        state.withLock { $0.pendingResubscriptions = pending }
        if pending.isEmpty { becomeReady() }
    }

    /// Marks the connection ready, announces it and wakes those waiting for it.
    private func becomeReady() {
        let (sessionPresent, waiters) = state.withLock { state in
            state.ready = true
            defer { state.connectWaiters.removeAll() }
            return (state.sessionResumed, Array(state.connectWaiters.values))
        }
        emit(.connected(sessionPresent: sessionPresent))
        for waiter in waiters { waiter.resume() }
    }

    /// The connection closed; the network loop reconnects.
    func didDisconnect(reason: Int32) {
        markDisconnected(reason: reason == 0 ? "disconnected" : Mosquitto.describe(reason))
    }

    func didPublish(mid: Int32, reason: Int32) {
        if reason >= 0x80 {
            acks.complete(
                mid,
                with: .failure(
                    MQTTError(
                        kind: .rejected, code: reason,
                        message: "the broker rejected a publish: \(Mosquitto.describeReason(reason))")))
        } else {
            acks.complete(mid, with: .success([reason]))
        }
    }

    func didSubscribe(mid: Int32, granted: [Int32]) {
        acks.complete(mid, with: .success(granted))
        let lastResubscription = state.withLock { state -> Bool in
            guard state.pendingResubscriptions.remove(mid) != nil else { return false }
            return state.pendingResubscriptions.isEmpty
        }
        if let code = granted.first, code >= 0x80 {
            logger.error("the broker refused a resubscription: \(Mosquitto.describeReason(code))")
        }
        if lastResubscription { becomeReady() }
    }
}
