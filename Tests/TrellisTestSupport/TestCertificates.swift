import Foundation
import TrellisBroker

/// A throwaway public key infrastructure for one test, made with the `openssl` command line tool
/// in a temporary directory: a CA, a server certificate for 127.0.0.1, ::1 and localhost, one for
/// another host name only, a client certificate (`CN=trellis`), and a second CA nobody trusts with
/// a server certificate of its own. Every certificate is valid for two days.
public struct TestCertificates: Sendable {
    public let directory: String

    /// The trusted CA's certificate.
    public var caCertificate: String { path("ca.crt") }
    /// The server certificate for 127.0.0.1, ::1 and localhost, signed by the CA, and its key.
    public var serverCertificate: String { path("server.crt") }
    public var serverKey: String { path("server.key") }
    /// A server certificate signed by the CA that names only `other.example`.
    public var otherHostCertificate: String { path("other.crt") }
    public var otherHostKey: String { path("other.key") }
    /// A client certificate with the common name `trellis`, signed by the CA, and its key.
    public var clientCertificate: String { path("client.crt") }
    public var clientKey: String { path("client.key") }
    /// A CA the client does not trust, and a server certificate (for 127.0.0.1) it signed.
    public var untrustedCACertificate: String { path("rogue-ca.crt") }
    public var untrustedServerCertificate: String { path("rogue-server.crt") }
    public var untrustedServerKey: String { path("rogue-server.key") }

    /// A directory holding the CA's certificate under its subject hash (`openssl rehash`).
    public var caDirectory: String { path("cadir") }

    public func path(_ name: String) -> String { directory + "/" + name }

    /// Makes every file; throws with openssl's output when a step fails. Waits for each openssl
    /// run without blocking a thread of the shared concurrency pool, which other tests need.
    public static func make() async throws -> TestCertificates {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "trellis-pki-\(UUID().uuidString)"
        ).path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let pki = TestCertificates(directory: directory)
        try await pki.makeCA("ca", name: "Trellis Test CA")
        try await pki.makeCA("rogue-ca", name: "Someone Else's CA")
        try await pki.issue(
            "server", by: "ca", subject: "localhost",
            extensions: "subjectAltName=IP:127.0.0.1,IP:::1,DNS:localhost\nextendedKeyUsage=serverAuth")
        try await pki.issue(
            "other", by: "ca", subject: "other.example",
            extensions: "subjectAltName=DNS:other.example\nextendedKeyUsage=serverAuth")
        try await pki.issue(
            "rogue-server", by: "rogue-ca", subject: "localhost",
            extensions: "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth")
        try await pki.issue("client", by: "ca", subject: "trellis", extensions: "extendedKeyUsage=clientAuth")
        try FileManager.default.createDirectory(atPath: pki.caDirectory, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: pki.caCertificate, toPath: pki.caDirectory + "/ca.crt")
        try await pki.openssl(["rehash", pki.caDirectory])
        return pki
    }

    /// Removes the directory.
    public func remove() {
        try? FileManager.default.removeItem(atPath: directory)
    }

    private func makeCA(_ name: String, name subject: String) async throws {
        try await openssl([
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", path("\(name).key"), "-out", path("\(name).crt"), "-days", "2", "-subj", "/CN=\(subject)",
            "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"
        ])
    }

    private func issue(_ name: String, by ca: String, subject: String, extensions: String) async throws {
        try await openssl([
            "req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", path("\(name).key"), "-out", path("\(name).csr"), "-subj", "/CN=\(subject)"
        ])
        try "basicConstraints=CA:FALSE\n\(extensions)\n".write(
            toFile: path("\(name).ext"), atomically: true, encoding: .utf8)
        try await openssl([
            "x509", "-req", "-in", path("\(name).csr"), "-CA", path("\(ca).crt"), "-CAkey", path("\(ca).key"),
            "-set_serial", "\(UInt32.random(in: 1...UInt32.max))", "-days", "2",
            "-extfile", path("\(name).ext"), "-out", path("\(name).crt")
        ])
    }

    /// Runs the openssl tool with `arguments` in this directory's log, and waits for it to finish.
    public func openssl(_ arguments: [String]) async throws {
        let log = path("openssl.log")
        let process = try ChildProcess(path: Self.opensslPath, arguments: arguments, outputPath: log)
        while process.isRunning { try await Task.sleep(for: .milliseconds(5)) }
        guard process.terminationStatus == 0 else {
            throw TimeoutError(
                message: "openssl \(arguments.joined(separator: " ")) failed: "
                    + ((try? String(contentsOfFile: log, encoding: .utf8)) ?? ""))
        }
    }

    private static var opensslPath: String {
        ["/usr/bin/openssl", "/usr/local/bin/openssl", "/opt/homebrew/bin/openssl"]
            .first { FileManager.default.isExecutableFile(atPath: $0) } ?? "/usr/bin/openssl"
    }

    /// Mosquitto lines for a TLS listener on `port` (127.0.0.1) with this CA, presenting
    /// `certificate` (default: the server certificate), TLS 1.2 at least.
    public func listener(
        port: Int, host: String = "127.0.0.1", certificate: String? = nil, key: String? = nil,
        requireClientCertificate: Bool = false
    ) -> [String] {
        [
            "listener \(port) \(host)",
            "cafile \(caCertificate)",
            "certfile \(certificate ?? serverCertificate)",
            "keyfile \(key ?? serverKey)",
            "tls_version tlsv1.2"
        ] + (requireClientCertificate ? ["require_certificate true", "use_identity_as_username true"] : [])
    }
}

/// The ports of the TLS listeners `withTLSTestBroker` adds beside the broker's plain one.
public struct TLSListeners: Sendable {
    /// The CA's certificate for 127.0.0.1, ::1 and localhost.
    public let verified: Int
    /// The same on ::1, the IPv6 loopback address.
    public let verifiedIPv6: Int
    /// A certificate from the CA that names only other.example.
    public let otherHost: Int
    /// A certificate for 127.0.0.1 from a CA the client does not trust.
    public let untrusted: Int
    /// The CA's certificate; a client certificate from the CA is required, and its common name
    /// is the client's user name (`use_identity_as_username`).
    public let clientCertificate: Int
}

/// A broker with the TLS listeners of ``TLSListeners`` beside its plain one, and the throwaway PKI
/// they use.
public struct TLSTestBroker: Sendable {
    public let broker: TestBroker
    public let pki: TestCertificates
    public let listeners: TLSListeners

    /// Makes a fresh PKI and starts the broker (`persistent` as ``TestBroker/start(anonymous:persistent:extraConfig:)``
    /// has it); on a failure removes what it made.
    public static func start(persistent: Bool = true, extraConfig: [String] = []) async throws -> TLSTestBroker {
        let pki = try await TestCertificates.make()
        do {
            var ports: Set<Int> = []
            while ports.count < 5 {
                guard let port = PortProbe.freeLoopbackPort() else {
                    throw TimeoutError(message: "no free loopback port")
                }
                ports.insert(port)
            }
            let sorted = ports.sorted()
            let listeners = TLSListeners(
                verified: sorted[0], verifiedIPv6: sorted[1], otherHost: sorted[2], untrusted: sorted[3],
                clientCertificate: sorted[4])
            let config =
                pki.listener(port: listeners.verified)
                + pki.listener(port: listeners.verifiedIPv6, host: "::1")
                + pki.listener(port: listeners.otherHost, certificate: pki.otherHostCertificate, key: pki.otherHostKey)
                + pki.listener(
                    port: listeners.untrusted, certificate: pki.untrustedServerCertificate,
                    key: pki.untrustedServerKey)
                + pki.listener(port: listeners.clientCertificate, requireClientCertificate: true)
                + extraConfig
            // The broker is waited for on every listener, the TLS ones included (each opens once its
            // certificates are loaded).
            let broker = try await TestBroker.start(persistent: persistent, extraConfig: config)
            return TLSTestBroker(broker: broker, pki: pki, listeners: listeners)
        } catch {
            pki.remove()
            throw error
        }
    }
}

/// Runs `body` with a fresh throwaway PKI and a broker that has, beside its plain listener on
/// `broker.port`, the TLS listeners of ``TLSListeners``; removes both afterwards.
public func withTLSTestBroker<T>(
    extraConfig: [String] = [],
    _ body: (TestBroker, TestCertificates, TLSListeners) async throws -> T
) async throws -> T {
    let started = try await TLSTestBroker.start(extraConfig: extraConfig)
    defer { started.pki.remove() }
    return try await withTearDown(of: started.broker, { await $0.stop() }) { broker in
        try await body(broker, started.pki, started.listeners)
    }
}
