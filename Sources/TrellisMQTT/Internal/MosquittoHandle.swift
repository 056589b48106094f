import CMosquitto
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What the handle reports from libmosquitto's network thread. Each closure must return without
/// blocking: it runs inside the library's network loop (the message callback may hand a message to
/// the consumer's own callback there, ``MQTTClient/setMessageCallback(_:)``, which never waits).
struct MosquittoCallbacks: Sendable {
    var message: @Sendable (MQTTMessage, _ packetID: Int32) -> Void
    var connect: @Sendable (_ reasonCode: Int32, _ sessionPresent: Bool) -> Void
    var disconnect: @Sendable (_ reasonCode: Int32) -> Void
    var publish: @Sendable (_ mid: Int32, _ reasonCode: Int32) -> Void
    var subscribe: @Sendable (_ mid: Int32, _ granted: [Int32]) -> Void
}

/// Owns one `struct mosquitto *` and is the only place its C calls are made.
///
/// libmosquitto is thread safe for publish/subscribe while another thread runs the network loop
/// (threaded mode `external`), which is how `MQTTClient` uses it.
final class MosquittoHandle: @unchecked Sendable {
    private let pointer: OpaquePointer
    private let callbacks: MosquittoCallbacks
    private let configuration: MQTTConfiguration
    /// Whether ``reconnect()`` returns before the TCP connection is made: plain TCP to an IP address
    /// (see there). The configuration does not change, so this is worked out once.
    let reconnectsAsynchronously: Bool
    /// The topic of the last message received, as a string: one message after another mostly
    /// comes on the same topic, and comparing its bytes costs less than making and checking a
    /// string of them (and, for a topic over 15 bytes, allocating one). Used only in the message
    /// callback, on the network thread.
    private var lastTopic = ""
    /// libmosquitto's error lines since the last `takeErrors()` (OpenSSL's reasons among them).
    private let errors = Mutex<[String]>([])

    init(configuration: MQTTConfiguration, callbacks: MosquittoCallbacks) throws {
        _ = Mosquitto.initialized
        self.configuration = configuration
        self.callbacks = callbacks
        self.reconnectsAsynchronously = configuration.tls == nil && Self.isAddress(configuration.host)
        guard let pointer = mosquitto_new(configuration.clientID, configuration.cleanStart, nil) else {
            throw MQTTError(
                kind: .invalidArgument, message: "could not create an MQTT client for id '\(configuration.clientID)'")
        }
        self.pointer = pointer
        mosquitto_user_data_set(pointer, Unmanaged.passUnretained(self).toOpaque())
        try configure()
        installCallbacks()
    }

    deinit {
        mosquitto_destroy(pointer)
    }

    private func configure() throws {
        let version = MQTT_PROTOCOL_V5
        try check(mosquitto_int_option(pointer, MOSQ_OPT_PROTOCOL_VERSION, version), "selecting MQTT v5")
        try check(
            mosquitto_int_option(pointer, MOSQ_OPT_TCP_NODELAY, configuration.tcpNoDelay ? 1 : 0), "setting TCP_NODELAY"
        )
        let inflight = Int32(clamping: max(1, min(configuration.inflightMaximum, 65535)))
        // A read-ahead window also caps what the broker may send unacknowledged (see `maxUnhandledMessages`).
        let receive = min(inflight, Int32(clamping: configuration.maxUnhandledMessages ?? Int(inflight)))
        try check(mosquitto_int_option(pointer, MOSQ_OPT_RECEIVE_MAXIMUM, receive), "setting receive maximum")
        try check(mosquitto_int_option(pointer, MOSQ_OPT_SEND_MAXIMUM, inflight), "setting send maximum")
        try check(mosquitto_threaded_set(pointer, true), "enabling threaded mode")
        if configuration.username != nil || configuration.password != nil {
            try check(
                mosquitto_username_pw_set(pointer, configuration.username, configuration.password),
                "setting credentials")
        }
        if let will = configuration.will {
            let rc = will.payload.withUnsafeBytes { buffer in
                mosquitto_will_set_v5(
                    pointer, will.topic, Int32(buffer.count), buffer.baseAddress,
                    Int32(will.qos.rawValue), will.retain, nil)
            }
            try check(rc, "setting the will message")
        }
        if let tls = configuration.tls { try configureTLS(tls) }
    }

    /// Verified TLS, 1.2 at least: the broker's chain against the given authorities (or the
    /// system's), and its certificate against the host name connected to.
    private func configureTLS(_ tls: MQTTTLSConfiguration) throws {
        try tls.validate()
        var authorityFile: String?
        var authorityDirectory: String?
        if let authorities = tls.certificateAuthorities {
            var isDirectory: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: authorities, isDirectory: &isDirectory)
            if isDirectory.boolValue { authorityDirectory = authorities } else { authorityFile = authorities }
        } else {
            try check(
                mosquitto_int_option(pointer, MOSQ_OPT_TLS_USE_OS_CERTS, 1), "trusting the system's CA certificates")
            // `mosquitto_tls_set` wants a CA file or directory: name the system's.
            authorityDirectory = String(cString: trellis_tls_default_ca_directory())
        }
        // An encrypted key is refused by `validate()`; should one slip through, the callback gives
        // OpenSSL no password instead of letting it ask on the terminal, which would block this thread.
        try check(
            mosquitto_tls_set(pointer, authorityFile, authorityDirectory, tls.certificate, tls.privateKey) {
                _, _, _, _ in 0
            },
            "loading the TLS files")
        try check(
            mosquitto_tls_opts_set(pointer, 1 /* SSL_VERIFY_PEER */, "tlsv1.2", nil), "requiring TLS 1.2 or later")
        try check(mosquitto_tls_insecure_set(pointer, false), "verifying the broker's host name")
    }

    /// Returns and forgets the error lines libmosquitto logged since the last call.
    func takeErrors() -> [String] {
        errors.withLock { lines in
            defer { lines.removeAll() }
            return lines
        }
    }

    /// Keeps libmosquitto's error lines (at most a few), adding to an OpenSSL error what OpenSSL
    /// concluded about the broker's certificate while the session that failed still exists.
    fileprivate func logged(level: Int32, text: String, verifyResult: Int) {
        guard level & Int32(MOSQ_LOG_ERR) != 0 else { return }
        var line = text
        if text.hasPrefix("OpenSSL Error"), verifyResult > 0 {
            line += " [certificate check: \(String(cString: trellis_tls_verify_text(verifyResult)))]"
        } else if text.hasPrefix("OpenSSL Error"), verifyResult == 0 {
            line += " [certificate check: ok]"
        }
        errors.withLock { lines in
            if !lines.contains(line) { lines.append(line) }
            if lines.count > 8 { lines.removeFirst(lines.count - 8) }
        }
    }

    /// Whether libmosquitto's log lines are kept (see ``takeErrors()``).
    ///
    /// Only while a connection is being made: the lines explain a failed TLS handshake or
    /// CONNECT, and nothing reads them once the broker has accepted the connection. With a log
    /// callback set, libmosquitto formats a debug line (an allocation and a `vsnprintf`) for every
    /// packet it sends or receives, four for each request a relay answers at QoS 1, so the callback
    /// is removed for as long as the connection is up.
    func keepLibraryLog(_ keep: Bool) {
        if keep {
            mosquitto_log_callback_set(pointer) { mosq, context, level, text in
                guard let context, let text, level & Int32(MOSQ_LOG_ERR) != 0 else { return }
                let verifyResult = mosq.map { trellis_tls_verify_result($0) } ?? -1
                Unmanaged<MosquittoHandle>.fromOpaque(context).takeUnretainedValue()
                    .logged(level: level, text: String(cString: text), verifyResult: verifyResult)
            }
        } else {
            mosquitto_log_callback_set(pointer, nil)
        }
    }

    /// `cString` as a string, the last topic's when the bytes are the same (``lastTopic``).
    private func topic(_ cString: UnsafePointer<CChar>) -> String {
        let length = strlen(cString)
        let same = lastTopic.utf8.withContiguousStorageIfAvailable { last in
            last.count == length && (length == 0 || memcmp(last.baseAddress!, cString, length) == 0)
        }
        if same == true { return lastTopic }
        lastTopic = String(cString: cString)
        return lastTopic
    }

    private func installCallbacks() {
        keepLibraryLog(true)
        mosquitto_message_v5_callback_set(pointer) { _, context, message, properties in
            guard let context, let message else { return }
            let handle = Unmanaged<MosquittoHandle>.fromOpaque(context).takeUnretainedValue()
            let m = message.pointee
            let payload: [UInt8] =
                m.payloadlen > 0 && m.payload != nil
                ? Array(UnsafeRawBufferPointer(start: m.payload, count: Int(m.payloadlen)))
                : []
            let copied = MQTTMessage(
                topic: m.topic.map { handle.topic($0) } ?? "",
                payload: payload,
                qos: QoS(rawValue: Int(m.qos)) ?? .atMostOnce,
                retain: m.retain,
                properties: MosquittoProperties.read(properties)
            )
            handle.callbacks.message(copied, m.mid)
        }
        mosquitto_connect_v5_callback_set(pointer) { _, context, reason, flags, _ in
            guard let context else { return }
            let handle = Unmanaged<MosquittoHandle>.fromOpaque(context).takeUnretainedValue()
            handle.callbacks.connect(reason, flags & 1 == 1)
        }
        mosquitto_disconnect_v5_callback_set(pointer) { _, context, reason, _ in
            guard let context else { return }
            Unmanaged<MosquittoHandle>.fromOpaque(context).takeUnretainedValue().callbacks.disconnect(reason)
        }
        mosquitto_publish_v5_callback_set(pointer) { _, context, mid, reason, _ in
            guard let context else { return }
            Unmanaged<MosquittoHandle>.fromOpaque(context).takeUnretainedValue().callbacks.publish(mid, reason)
        }
        mosquitto_subscribe_v5_callback_set(pointer) { _, context, mid, count, granted, _ in
            guard let context else { return }
            let codes = granted.map { Array(UnsafeBufferPointer(start: $0, count: Int(count))) } ?? []
            Unmanaged<MosquittoHandle>.fromOpaque(context).takeUnretainedValue().callbacks.subscribe(mid, codes)
        }
    }

    /// Opens the TCP connection and sends CONNECT; the CONNACK arrives through the loop.
    func connect() -> Int32 {
        (try? MosquittoProperties.withConnectProperties(
            sessionExpiry: configuration.sessionExpiry, maximumPacketSize: configuration.maximumPacketSize
        ) { properties in
            mosquitto_connect_bind_v5(
                pointer, configuration.host, Int32(configuration.port),
                Int32(configuration.keepAlive), nil, properties)
        }) ?? Int32(MOSQ_ERR_INVAL.rawValue)
    }

    /// Reconnects with the host, port and CONNECT properties of the first `connect()` (stored by it
    /// even when it failed). To an IP address over plain TCP it does not wait for the connection:
    /// the loop sees it made (its CONNECT written, the CONNACK read) or not made in time
    /// (``ConnectionAttempts/transportLimit``). libmosquitto's blocking connect waits for the kernel
    /// to give the attempt up, and against a link that drops packets silently the kernel sends its
    /// SYN again only after 1, 3, 7, 15, 31 and 63 s: a link that came back was used only at the next
    /// of these, and the thread (its jobs, a stop) waited meanwhile. It still waits over TLS, whose
    /// unfinished handshake only libmosquitto's own loop drives, and for a host name: the library's
    /// asynchronous connect tries only the name's first address, where the blocking one falls back
    /// to the next (an IPv6 address that refuses or drops, then the IPv4 one).
    func reconnect() -> Int32 {
        reconnectsAsynchronously ? mosquitto_reconnect_async(pointer) : mosquitto_reconnect(pointer)
    }

    /// Whether `host` is an IPv4 or IPv6 address rather than a name to resolve.
    static func isAddress(_ host: String) -> Bool {
        var address = in6_addr()
        return inet_pton(AF_INET, host, &address) == 1 || inet_pton(AF_INET6, host, &address) == 1
    }

    /// True when the socket's TCP connection is made (it has a peer); false while it is still
    /// being made or when there is no socket.
    var transportConnected: Bool {
        let socket = self.socket
        guard socket >= 0 else { return false }
        var address = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        return withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(socket, $0, &length) == 0 }
        }
    }

    /// The connection's socket, or -1 when there is none; the loop polls it itself.
    var socket: Int32 { mosquitto_socket(pointer) }

    /// Reads what the socket holds (at least one packet's worth), running the callbacks.
    func loopRead() -> Int32 {
        mosquitto_loop_read(pointer, 1)
    }

    /// Writes the packets queued so far.
    func loopWrite() -> Int32 {
        mosquitto_loop_write(pointer, 1)
    }

    /// Keepalive: sends a PINGREQ when due and closes a connection whose broker stopped answering.
    func loopMisc() -> Int32 {
        mosquitto_loop_misc(pointer)
    }

    /// True while packets wait to be written.
    func wantsWrite() -> Bool {
        mosquitto_want_write(pointer)
    }

    /// Sends DISCONNECT; the loop writes it and closes the socket.
    func disconnect() -> Int32 {
        mosquitto_disconnect_v5(pointer, 0, nil)
    }

    /// Queues a PUBLISH and returns its message id. A QoS 2 message to a broker whose CONNACK took
    /// no QoS 2 (Mosquitto's `max_qos 1`) goes at QoS 1, the most that broker offers, rather than
    /// not at all; a QoS 1 message is never lowered to QoS 0.
    func publish(topic: String, payload: [UInt8], qos: QoS, retain: Bool, properties: MQTTProperties) throws -> (
        Int32, Int32
    ) {
        let sent = try queue(topic: topic, payload: payload, qos: qos, retain: retain, properties: properties)
        guard sent.0 == Int32(MOSQ_ERR_QOS_NOT_SUPPORTED.rawValue), qos == .exactlyOnce else { return sent }
        return try queue(topic: topic, payload: payload, qos: .atLeastOnce, retain: retain, properties: properties)
    }

    private func queue(topic: String, payload: [UInt8], qos: QoS, retain: Bool, properties: MQTTProperties) throws
        -> (Int32, Int32)
    {
        try MosquittoProperties.withPublishProperties(properties) { list in
            var mid: Int32 = 0
            // withCString: a short topic, kept inside the String itself, goes through a stack buffer,
            // where passing the String as the C argument would copy it to the heap.
            let rc = topic.withCString { topic in
                payload.withUnsafeBytes { buffer in
                    mosquitto_publish_v5(
                        pointer, &mid, topic, Int32(buffer.count), buffer.baseAddress,
                        Int32(qos.rawValue), retain, list)
                }
            }
            return (rc, mid)
        }
    }

    /// Queues a SUBSCRIBE and returns its message id.
    func subscribe(_ subscription: MQTTSubscription) -> (Int32, Int32) {
        var mid: Int32 = 0
        let options = subscription.noLocal ? Int32(MQTT_SUB_OPT_NO_LOCAL.rawValue) : 0
        let rc = mosquitto_subscribe_v5(
            pointer, &mid, subscription.filter, Int32(subscription.qos.rawValue), options, nil)
        return (rc, mid)
    }

    /// Queues an UNSUBSCRIBE.
    func unsubscribe(_ filter: String) -> Int32 {
        mosquitto_unsubscribe_v5(pointer, nil, filter, nil)
    }

    private func check(_ code: Int32, _ action: String) throws {
        if let error = Mosquitto.error(code, doing: action) { throw error }
    }
}

extension MosquittoHandle {
    /// Cuts the TCP connection without a DISCONNECT, as a crash or a pulled cable would.
    func dropConnection() {
        let fd = mosquitto_socket(pointer)
        if fd >= 0 { shutdown(fd, Int32(SHUT_RDWR)) }
    }
}
