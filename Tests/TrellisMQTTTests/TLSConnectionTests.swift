import Foundation
import Testing
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import TrellisMQTT
import TrellisTestSupport

/// The client over TLS against a real Mosquitto whose listeners use a CA made for the tests: the shared
/// one, but for a test that restarts its broker with another certificate.
@Suite("MQTT client over TLS")
struct TLSConnectionTests {
    /// A client for `host:port` over TLS (plain without `tls`), retrying fast so a test sees several attempts.
    func client(
        _ port: Int, host: String = "127.0.0.1", _ tls: MQTTTLSConfiguration?,
        id: String = "tls-\(UUID().uuidString.prefix(6))"
    ) throws -> MQTTClient {
        try MQTTClient(
            configuration: MQTTConfiguration(host: host, port: port, clientID: id, reconnectDelay: 0.05...0.2, tls: tls)
        )
    }

    /// The first failed attempt's reason; the client must not connect.
    func firstFailure(of client: MQTTClient) async throws -> String {
        client.start()
        var events = client.events.makeAsyncIterator()
        while let event = await events.next() {
            switch event {
            case let .connectFailed(reason, _):
                return reason
            case .connected:
                Issue.record("connected although it should have been refused")
                return ""
            case .disconnected:
                continue
            }
        }
        return ""
    }

    /// The first failed attempt's reason of a client for `port` with `tls`, which must not connect; the client
    /// is shut down.
    func refusal(at port: Int, _ tls: MQTTTLSConfiguration?) async throws -> String {
        let refused = try client(port, tls)
        let reason = try await firstFailure(of: refused)
        await refused.shutdown()
        return reason
    }

    @Test("the right CA connects, and messages cross over TLS (IPv4 and IPv6)")
    func verifiedRoundTrip() async throws {
        try await SharedBroker.withTLS { broker, pki, listeners, space in
            let tls = MQTTTLSConfiguration(certificateAuthorities: pki.caCertificate)
            for (host, port) in [
                ("127.0.0.1", listeners.verified), ("localhost", listeners.verified), ("::1", listeners.verifiedIPv6)
            ] {
                let subscriber = try client(port, host: host, tls)
                subscriber.start()
                try await subscriber.waitUntilConnected()
                let inbox = await MessageCollector.collecting(subscriber)
                try await subscriber.subscribe(space("tls/#"))
                let plain = try await TestClients.connect(to: broker)
                try await plain.publishAndWait(
                    topic: space("tls/\(port)"), payload: Array("over \(host)".utf8), qos: .atLeastOnce)
                let received = try await inbox.messages(on: space("tls/\(port)"))
                #expect(received.first?.text == "over \(host)")
                await plain.shutdown()
                await subscriber.shutdown()
            }
        }
    }

    @Test("a directory of hashed CA certificates works as --tls-ca")
    func caDirectory() async throws {
        try await SharedBroker.withTLS { _, pki, listeners, _ in
            let client = try client(listeners.verified, MQTTTLSConfiguration(certificateAuthorities: pki.caDirectory))
            client.start()
            try await client.waitUntilConnected()
            #expect(client.isConnected)
            await client.shutdown()
        }
    }

    @Test("a certificate from an untrusted CA is refused, saying so, and retried")
    func untrustedCA() async throws {
        try await SharedBroker.withTLS { _, pki, listeners, _ in
            // The listener's certificate comes from a CA the client does not trust …
            let refused = try client(
                listeners.untrusted, MQTTTLSConfiguration(certificateAuthorities: pki.caCertificate))
            let reason = try await firstFailure(of: refused)
            #expect(reason.contains("not signed by a trusted CA"), "\(reason)")
            #expect(reason.contains("certificate verify failed"), "\(reason)")
            #expect(reason.contains("mqtts://127.0.0.1:\(listeners.untrusted)"), "\(reason)")
            // … and it keeps trying with backoff.
            var events = refused.events.makeAsyncIterator()
            guard case .connectFailed? = await events.next() else {
                Issue.record("expected another failed attempt")
                return
            }
            #expect(!refused.isConnected)
            await refused.shutdown()

            // The client trusting the other CA (and the system's CAs, which do not include the test CA) is refused too.
            let systemReason = try await refusal(at: listeners.verified, MQTTTLSConfiguration())
            #expect(systemReason.contains("not signed by a trusted CA"), "\(systemReason)")
        }
    }

    @Test("a certificate for another host name is refused, naming the host")
    func wrongHost() async throws {
        try await SharedBroker.withTLS { _, pki, listeners, _ in
            let reason = try await refusal(
                at: listeners.otherHost, MQTTTLSConfiguration(certificateAuthorities: pki.caCertificate))
            #expect(reason.contains("does not name the host 127.0.0.1"), "\(reason)")
        }
    }

    /// libmosquitto's log, which carries OpenSSL's reasons, is read only while a connection is being
    /// made (a connection that is up does without it): a reconnect after a connection was up must
    /// keep it again.
    ///
    /// The restart waits for every listener of the broker, this TLS one included, and starts the
    /// broker again when a freed port was taken for a moment by another test's connection, so the
    /// reconnects end up reaching the restarted listener.
    @Test("a reconnect refused over TLS after a connection was up still says why")
    func refusedReconnect() async throws {
        try await withTLSTestBroker { broker, pki, listeners in
            let client = try client(listeners.verified, MQTTTLSConfiguration(certificateAuthorities: pki.caCertificate))
            var events = client.events.makeAsyncIterator()
            client.start()
            try await client.waitUntilConnected()
            // The broker comes back on the same port with a certificate from a CA the client does not trust.
            let verifiedBlock = pki.listener(port: listeners.verified).joined(separator: "\n")
            let config = try String(contentsOfFile: broker.configPath, encoding: .utf8)
            #expect(config.contains(verifiedBlock))
            let untrustedBlock = pki.listener(
                port: listeners.verified, certificate: pki.untrustedServerCertificate,
                key: pki.untrustedServerKey
            ).joined(separator: "\n")
            try config.replacingOccurrences(of: verifiedBlock, with: untrustedBlock)
                .write(toFile: broker.configPath, atomically: true, encoding: .utf8)
            broker.kill()
            try await broker.restart()
            // Attempts made while the broker was down are refused (as many as its restart took); the
            // first failure of another kind is the handshake with the restarted broker. The client
            // tries again every 0.2 s at most, so the deadline is looked at often enough.
            let deadline = ContinuousClock.now + .seconds(30)
            var reason: String?
            while reason == nil, ContinuousClock.now < deadline, let event = await events.next() {
                if case let .connectFailed(failure, _) = event, !failure.hasSuffix("Connection refused") {
                    reason = failure
                }
            }
            #expect(reason?.contains("not signed by a trusted CA") == true, "\(reason ?? "the events ended first")")
            await client.shutdown()
        }
    }

    @Test("without a client certificate a listener that requires one refuses, saying so")
    func missingClientCertificate() async throws {
        try await SharedBroker.withTLS { _, pki, listeners, _ in
            let reason = try await refusal(
                at: listeners.clientCertificate, MQTTTLSConfiguration(certificateAuthorities: pki.caCertificate))
            // OpenSSL's alert, or (when the alert is lost to the closing) the closing with the likely cause.
            #expect(
                reason.contains("requires a client certificate (--tls-cert, --tls-key) and none was sent"), "\(reason)")
        }
    }

    @Test("with the client certificate it connects, its common name as user name")
    func clientCertificate() async throws {
        try await SharedBroker.withTLS { broker, pki, listeners, space in
            let tls = MQTTTLSConfiguration(
                certificateAuthorities: pki.caCertificate,
                certificate: pki.clientCertificate, privateKey: pki.clientKey)
            let id = space.id("by-certificate")
            let client = try client(listeners.clientCertificate, tls, id: id)
            client.start()
            try await client.waitUntilConnected()
            // Mosquitto logs the connection's line with the user name the certificate gave it.
            let line = broker.log().split(separator: "\n").first { $0.contains(" as \(id) (") }
            #expect(line?.contains("u'trellis'") == true, "\(line ?? "no line for \(id)")")
            await client.shutdown()
        }
    }

    @Test("a plain client at a TLS port, and a TLS client at a plain port, fail with a reason")
    func mismatchedTransport() async throws {
        try await SharedBroker.withTLS { broker, pki, listeners, _ in
            let plainReason = try await refusal(at: listeners.verified, nil)
            #expect(!plainReason.isEmpty)
            let tlsReason = try await refusal(
                at: broker.port, MQTTTLSConfiguration(certificateAuthorities: pki.caCertificate))
            #expect(tlsReason.contains("TLS"), "\(tlsReason)")
        }
    }

    @Test(
        "a server that takes the connection and never answers is given up after the keepalive and retried",
        .timeLimit(.minutes(1)), arguments: [true, false])
    func silentServer(tls: Bool) async throws {
        // A listening socket nobody accepts from: the kernel completes the TCP handshake, then nothing.
        let listening = try LoopbackListener(backlog: 16)
        defer { close(listening.fd) }
        let port = listening.port
        let client = try MQTTClient(
            configuration: MQTTConfiguration(
                host: "127.0.0.1", port: port, clientID: "patient", keepAlive: 5, reconnectDelay: 0.05...0.2,
                tls: tls ? MQTTTLSConfiguration() : nil))
        let reason = try await firstFailure(of: client)
        #expect(reason.contains("no answer within 5"), "\(reason)")
        #expect(reason.contains(tls ? "no TLS handshake or CONNACK" : "no CONNACK"), "\(reason)")
        #expect(!reason.contains("client certificate"), "\(reason)")
        await client.shutdown()
    }

    @Test("missing TLS files are refused before any connection, naming the file")
    func missingFiles() throws {
        let missing = "/nonexistent/trellis-\(UUID().uuidString).pem"
        let present = FileManager.default.temporaryDirectory.appendingPathComponent("trellis-\(UUID().uuidString).pem")
            .path
        try "any text\n".write(toFile: present, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: present) }
        for tls in [
            MQTTTLSConfiguration(certificateAuthorities: missing),
            MQTTTLSConfiguration(certificate: missing, privateKey: present),
            MQTTTLSConfiguration(certificate: present, privateKey: missing)
        ] {
            #expect {
                _ = try MQTTClient(configuration: MQTTConfiguration(port: 8883, clientID: "x", tls: tls))
            } throws: { error in
                "\(error)".contains(missing) && "\(error)".contains("no such file")
            }
        }
        #expect(throws: MQTTError.self) {
            _ = try MQTTClient(
                configuration: MQTTConfiguration(
                    port: 8883, clientID: "x", tls: MQTTTLSConfiguration(certificate: present)))
        }
    }

    @Test("an encrypted client key is refused at once, naming it, instead of OpenSSL asking for its password")
    func encryptedKey() async throws {
        let pki = try await TestCertificates.make()
        defer { pki.remove() }
        let encrypted = pki.path("client-encrypted.key")
        try await pki.openssl(["pkey", "-in", pki.clientKey, "-out", encrypted, "-aes256", "-passout", "pass:secret"])
        #expect {
            _ = try MQTTClient(
                configuration: MQTTConfiguration(
                    port: 8883, clientID: "x",
                    tls: MQTTTLSConfiguration(
                        certificateAuthorities: pki.caCertificate, certificate: pki.clientCertificate,
                        privateKey: encrypted)))
        } throws: { error in
            "\(error)".contains(encrypted) && "\(error)".contains("is encrypted")
        }
    }
}
