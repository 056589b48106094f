import CMosquitto
import Synchronization

extension MQTTClient {
    /// Publishes without waiting for the broker. QoS 1 and 2 messages published while the link is
    /// down are queued by libmosquitto and sent after the reconnect; QoS 0 ones throw `notConnected`.
    public func publish(
        topic: String,
        payload: [UInt8],
        qos: QoS = .atMostOnce,
        retain: Bool = false,
        properties: MQTTProperties = MQTTProperties()
    ) throws {
        let (rc, _) = try handle.publish(
            topic: topic, payload: payload, qos: qos, retain: retain, properties: properties)
        wakeNetworkThread()
        try check(rc, qos: qos, topic: topic)
    }

    /// Publishes a message value without waiting.
    public func publish(_ message: MQTTMessage) throws {
        try publish(
            topic: message.topic, payload: message.payload, qos: message.qos,
            retain: message.retain, properties: message.properties)
    }

    /// Publishes and waits until the broker acknowledged it (QoS 1 and 2) or it was written (QoS 0).
    public func publishAndWait(
        topic: String,
        payload: [UInt8],
        qos: QoS = .atLeastOnce,
        retain: Bool = false,
        properties: MQTTProperties = MQTTProperties()
    ) async throws {
        try await publishForAcknowledgement(
            MQTTMessage(topic: topic, payload: payload, qos: qos, retain: retain, properties: properties)
        ).acknowledged()
    }

    /// The acknowledgement of one publish, to wait for later.
    public struct Acknowledgement: Sendable {
        let client: MQTTClient
        let mid: Int32

        /// Returns once the broker acknowledged the message (QoS 1 and 2) or it was written (QoS 0).
        public func acknowledged() async throws {
            _ = try await client.acks.wait(for: mid)
        }

        /// Returns once the broker acknowledged the message, as ``acknowledged()``, but a
        /// cancellation of the waiting task ends the wait only `grace` later (with
        /// `CancellationError` if no answer came meanwhile). For a sender that must know whether
        /// the broker took a message already on its way, so that it does not send it again after
        /// a restart: the broker may have it, and its readers too.
        public func acknowledged(outlastingCancellationBy grace: Duration) async throws {
            // The wait is a task of its own, so that the caller's cancellation does not reach it
            // until the grace has passed.
            let answer = Task { try await acknowledged() }
            // The grace's timer, stopped once the answer came so that it does not sleep on for nothing.
            let timer = Mutex<Task<Void, Never>?>(nil)
            defer { timer.withLock { $0?.cancel() } }
            try await withTaskCancellationHandler {
                try await answer.value
            } onCancel: {
                timer.withLock {
                    $0 = Task {
                        guard (try? await Task.sleep(for: grace)) != nil else { return }
                        answer.cancel()
                    }
                }
            }
        }

        /// Calls `body` once the broker acknowledged the message (with nil) or refused it, or the
        /// client shut down (with the error): on the network thread, or at once when that happened
        /// already. For a sender with many messages in flight, where a task waiting for each would
        /// cost a task switch per acknowledgement. `body` must not block. Use this or
        /// ``acknowledged()``, once.
        public func whenAcknowledged(_ body: @escaping @Sendable (MQTTError?) -> Void) {
            client.acks.notify(for: mid) { outcome in
                switch outcome {
                case .success: body(nil)
                case let .failure(error): body(error)
                }
            }
        }
    }

    /// Queues a publish now, in the order of the calls, and returns its acknowledgement to wait for:
    /// for a sender that keeps several messages in flight and their order (libmosquitto sends
    /// them in the order queued, and again after a reconnect).
    public func publishForAcknowledgement(_ message: MQTTMessage) throws -> Acknowledgement {
        acks.beginRegistration()
        do {
            let (rc, queued) = try handle.publish(
                topic: message.topic, payload: message.payload, qos: message.qos, retain: message.retain,
                properties: message.properties)
            wakeNetworkThread()
            try check(rc, qos: message.qos, topic: message.topic)
            return Acknowledgement(client: self, mid: queued)
        } catch {
            acks.abandonRegistration()
            throw error
        }
    }

    /// Adds a subscription the client keeps across reconnects. When connected, waits for the
    /// broker's SUBACK and throws if the broker refused it; otherwise it is sent on connect.
    public func subscribe(_ subscription: MQTTSubscription) async throws {
        let connected = state.withLock { state in
            state.subscriptions[subscription.filter] = subscription
            return state.connected
        }
        guard connected else { return }
        acks.beginRegistration()
        let (rc, mid) = handle.subscribe(subscription)
        wakeNetworkThread()
        if let error = Mosquitto.error(rc, doing: "subscribing to \(subscription.filter)") {
            acks.abandonRegistration()
            if error.kind == .notConnected { return }
            throw error
        }
        let granted = try await acks.wait(for: mid)
        if let code = granted.first, code >= 0x80 {
            state.withLock { _ = $0.subscriptions.removeValue(forKey: subscription.filter) }
            throw MQTTError(
                kind: .subscriptionRefused, code: code,
                message:
                    "the broker refused the subscription to \(subscription.filter): \(Mosquitto.describeReason(code))")
        }
    }

    /// Subscribes to a filter.
    public func subscribe(_ filter: String, qos: QoS = .atLeastOnce, noLocal: Bool = false) async throws {
        try await subscribe(MQTTSubscription(filter, qos: qos, noLocal: noLocal))
    }

    /// Removes a subscription, locally and at the broker.
    public func unsubscribe(_ filter: String) throws {
        let connected = state.withLock { state in
            state.subscriptions.removeValue(forKey: filter)
            return state.connected
        }
        guard connected else { return }
        let rc = handle.unsubscribe(filter)
        wakeNetworkThread()
        if let error = Mosquitto.error(rc, doing: "unsubscribing from \(filter)"),
            error.kind != .notConnected
        {
            throw error
        }
    }

    /// The filters currently kept, sorted.
    public var subscriptions: [MQTTSubscription] {
        state.withLock { Array($0.subscriptions.values) }.sorted { $0.filter < $1.filter }
    }

    /// Disconnects cleanly (no will is sent), stops the network thread and ends both streams.
    public func shutdown() async {
        // The network loop sends the DISCONNECT itself as it ends, after everything queued before it.
        let started = state.withLock { state in
            state.stopping = true
            return state.started
        }
        executor.wake()
        if started {
            await withCheckedContinuation { continuation in
                let done = state.withLock { state -> Bool in
                    if state.loopFinished { return true }
                    state.stopWaiters.append(continuation)
                    return false
                }
                if done { continuation.resume() }
            }
        }
        acks.failAll(MQTTError(kind: .shutDown, message: "the MQTT client was shut down"))
        let waiters = state.withLock { state in
            defer { state.connectWaiters.removeAll() }
            return Array(state.connectWaiters.values)
        }
        for waiter in waiters { waiter.resume() }
        finishStreams()
    }

    private func check(_ rc: Int32, qos: QoS, topic: String) throws {
        if rc == Mosquitto.noConnection && qos > .atMostOnce { return }
        if let error = Mosquitto.error(rc, doing: "publishing to \(topic)") { throw error }
    }
}

extension MQTTClient {
    /// Cuts the connection without a DISCONNECT, so the broker publishes the will; the client
    /// then reconnects as after any network failure. For fault tests.
    package func dropConnectionUncleanly() {
        handle.dropConnection()
    }
}
