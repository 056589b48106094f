import Foundation
import Testing
import TrellisMQTT
import TrellisTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// A burst of reads takes every message that arrived together, even when packets that are not
/// messages lie between them: a broker answers the client's own QoS 1 publishes with PUBACKs that
/// land between the messages it forwards, and a burst that ended at each of them would hand the
/// consumer one message at a time.
///
/// A real Mosquitto interleaves them only by timing, so the packets come from a socket the test
/// writes itself: a CONNACK, then, in one write, five QoS 1 PUBLISHes with a PINGRESP after each
/// of the first four (plain MQTT 5 packets that carry no message, as a PUBACK does).
@Suite("Bursts of reads")
struct BurstReadTests {
    @Test("messages separated by packets that are not messages are read in one burst")
    func burstSpansOtherPackets() async throws {
        let server = try ScriptedServer()
        let client = try MQTTClient(
            configuration: MQTTConfiguration(
                host: "127.0.0.1", port: server.port, clientID: "burst", keepAlive: 30, reconnectDelay: 0.05...0.2,
                maxUnhandledMessages: 32))
        client.start()
        try await client.waitUntilConnected()
        var stream: [UInt8] = []
        for index in 0..<5 {
            stream += [
                0x32, 0x07, 0x00, 0x01, UInt8(ascii: "b"), 0x00, UInt8(index + 1), 0x00,
                UInt8(ascii: "0") + UInt8(index)
            ]
            if index < 4 { stream += [0xD0, 0x00] }
        }
        server.send(stream)
        // Handled on the network thread, between two passes of its loop: what the burst read is
        // all queued by the time the first message is handled.
        var queuedBehindFirst: Bool?
        let received = try await withTaskExecutorPreference(client.taskExecutor) {
            try await receive(5, from: client) { _ in
                if queuedBehindFirst == nil { queuedBehindFirst = client.messages.hasQueued }
                client.messageHandled()
            }
        }
        #expect(received.map { $0.text ?? "" } == ["0", "1", "2", "3", "4"])
        #expect(queuedBehindFirst == true, "the burst ended at the first packet that was not a message")
        await client.shutdown()
        server.close()
    }
}

/// A loopback listener that accepts one MQTT client, answers its CONNECT with a CONNACK, writes
/// what it is given, and reads (and drops) whatever the client sends until it goes away.
private final class ScriptedServer: @unchecked Sendable {
    let port: Int
    private let listener: Int32
    private let accepted = DispatchSemaphore(value: 0)
    private var connection: Int32 = -1

    init() throws {
        let listening = try LoopbackListener(backlog: 1)
        listener = listening.fd
        port = listening.port
        Thread { [self] in serve() }.start()
    }

    /// Accepts the client, reads its CONNECT, answers with a CONNACK (MQTT 5, no properties), then
    /// drains the socket.
    private func serve() {
        let fd = accept(listener, nil, nil)
        guard fd >= 0 else { accepted.signal(); return }
        connection = fd
        var header = [UInt8](repeating: 0, count: 1)
        _ = read(fd, &header, 1)
        var length = 0, shift = 0, byte: UInt8 = 0x80
        while byte & 0x80 != 0 {
            guard read(fd, &byte, 1) == 1 else { break }
            length += Int(byte & 0x7F) << shift
            shift += 7
        }
        var body = [UInt8](repeating: 0, count: max(length, 1))
        var got = 0
        while got < length {
            let count = body.withUnsafeMutableBytes { read(fd, $0.baseAddress! + got, length - got) }
            guard count > 0 else { break }
            got += count
        }
        let connack: [UInt8] = [0x20, 0x03, 0x00, 0x00, 0x00]
        _ = connack.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        accepted.signal()
        var sink = [UInt8](repeating: 0, count: 4096)
        while read(fd, &sink, sink.count) > 0 {}
    }

    /// Writes `bytes` in one call, once the client is connected.
    func send(_ bytes: [UInt8]) {
        accepted.wait()
        accepted.signal()
        _ = bytes.withUnsafeBytes { write(connection, $0.baseAddress, $0.count) }
    }

    func close() {
        Glibc.close(listener)
        if connection >= 0 { shutdown(connection, Int32(SHUT_RDWR)) }
    }
}

/// The scripted server could not listen on a loopback port.
