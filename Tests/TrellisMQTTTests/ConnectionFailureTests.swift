import Testing
@testable import TrellisMQTT

/// The sentence a failed attempt is logged with, from the lines libmosquitto and OpenSSL 3 log
/// (as seen against Mosquitto 2.0 in the TLS tests).
@Suite("Connection failure reasons")
struct ConnectionFailureTests {
    static let cases: [(errors: [String], expected: String)] = [
        (
            [
                "OpenSSL Error[0]: error:0A000086:SSL routines::certificate verify failed [certificate check: unable to get local issuer certificate]"
            ],
            "TLS: the broker's certificate is not signed by a trusted CA (unable to get local issuer certificate) [OpenSSL: error:0A000086:SSL routines::certificate verify failed]"
        ),
        (
            [
                "Error: host name verification failed.",
                "OpenSSL Error[0]: error:0A000086:SSL routines::certificate verify failed [certificate check: ok]"
            ],
            "TLS: the broker's certificate does not name the host 127.0.0.1 [OpenSSL: error:0A000086:SSL routines::certificate verify failed]"
        ),
        (
            [
                "OpenSSL Error[0]: error:0A000086:SSL routines::certificate verify failed [certificate check: certificate has expired]"
            ],
            "TLS: the broker's certificate is out of its validity period (certificate has expired) [OpenSSL: error:0A000086:SSL routines::certificate verify failed]"
        ),
        (
            [
                "OpenSSL Error[0]: error:0A00045C:SSL routines::tlsv13 alert certificate required [certificate check: ok]"
            ],
            "TLS: the broker requires a client certificate (--tls-cert, --tls-key) and none was sent [OpenSSL: error:0A00045C:SSL routines::tlsv13 alert certificate required]"
        ),
        (
            ["OpenSSL Error[0]: error:0A000418:SSL routines::tlsv1 alert unknown ca"],
            "TLS: the broker refused the TLS handshake or the client certificate [OpenSSL: error:0A000418:SSL routines::tlsv1 alert unknown ca]"
        ),
        (
            ["OpenSSL Error[0]: error:0A000126:SSL routines::unexpected eof while reading"],
            "TLS: the broker closed the connection or answered without TLS: is this port its TLS listener? [OpenSSL: error:0A000126:SSL routines::unexpected eof while reading]"
        ),
        (
            ["Error: Unable to load CA certificates, check cafile \"/tmp/ca.crt\"."],
            "TLS: Unable to load CA certificates, check cafile \"/tmp/ca.crt\"."
        ),
        (
            [
                "OpenSSL Error[0]: error:05800074:x509 certificate routines::key values mismatch",
                "Error: Client certificate/key are inconsistent."
            ],
            "TLS: the client certificate and key do not belong together [OpenSSL: error:05800074:x509 certificate routines::key values mismatch]"
        )
    ]

    @Test("OpenSSL's lines become a reason a user can act on", arguments: cases)
    func reasons(_ errors: [String], _ expected: String) {
        #expect(
            ConnectionFailure.describe(
                code: 8, libraryText: "A TLS error occurred.", errors: errors, host: "127.0.0.1", tls: true) == expected
        )
    }

    @Test("a TLS connection closed before the CONNACK with nothing logged names the likely cause")
    func closedWithoutAlert() {
        #expect(
            ConnectionFailure.describe(
                code: 14, libraryText: "Protocol error", errors: [], host: "h", tls: true, afterOpen: true)
                == "TLS: the broker closed the connection before answering the CONNECT (Protocol error); a broker does this when it requires a client certificate (--tls-cert, --tls-key) and none was sent"
        )
        #expect(
            ConnectionFailure.describe(
                code: 14, libraryText: "Protocol error", errors: [], host: "h", tls: true, afterOpen: true,
                clientCertificate: true
            ).contains("it may have refused the client certificate"))
    }

    @Test("without TLS, or with nothing logged, libmosquitto's own text stands")
    func plain() {
        #expect(
            ConnectionFailure.describe(code: 14, libraryText: "Connection refused", errors: [], host: "h", tls: true)
                == "Connection refused")
        #expect(
            ConnectionFailure.describe(
                code: 14, libraryText: "Connection refused", errors: ["Error: x"], host: "h", tls: false)
                == "Connection refused")
    }
}
