import Foundation

/// How the client secures its connection: whom it trusts and, for brokers that ask for one, the
/// certificate it shows. The broker's certificate is always verified, against the broker's host
/// name too, and TLS 1.2 is the least version spoken; there is deliberately no switch to turn
/// either off.
public struct MQTTTLSConfiguration: Sendable, Hashable {
    /// A PEM file, or a directory of PEM files named by their subject hash (`openssl rehash`), of
    /// the authorities that may sign the broker's certificate. Nil trusts the system's authorities.
    public var certificateAuthorities: String?
    /// The client certificate (PEM) shown to brokers that require one, with its private key.
    public var certificate: String?
    /// The client certificate's private key (PEM, not encrypted).
    public var privateKey: String?

    public init(certificateAuthorities: String? = nil, certificate: String? = nil, privateKey: String? = nil) {
        self.certificateAuthorities = certificateAuthorities
        self.certificate = certificate
        self.privateKey = privateKey
    }

    /// Whether the system's authorities are trusted (no CA was given).
    public var usesSystemAuthorities: Bool { certificateAuthorities == nil }

    /// Checks, before any connection, that each named file can be read and that a certificate
    /// comes with its key; the error names the file and says what is wrong with it.
    public func validate() throws(MQTTError) {
        if (certificate == nil) != (privateKey == nil) {
            throw MQTTError(
                kind: .invalidArgument,
                message: certificate == nil
                    ? "a TLS client key needs its certificate as well (--tls-cert, broker.tls.cert)"
                    : "a TLS client certificate needs its private key as well (--tls-key, broker.tls.key)")
        }
        if let certificateAuthorities {
            try Self.checkReadable(certificateAuthorities, what: "TLS CA file", directoryAllowed: true)
        }
        if let certificate {
            try Self.checkReadable(certificate, what: "TLS client certificate", directoryAllowed: false)
        }
        if let privateKey {
            try Self.checkReadable(privateKey, what: "TLS client key", directoryAllowed: false)
            if let text = try? String(contentsOfFile: privateKey, encoding: .utf8),
                text.contains("-----BEGIN ENCRYPTED PRIVATE KEY-----") || text.contains("Proc-Type: 4,ENCRYPTED")
            {
                throw MQTTError(
                    kind: .invalidArgument,
                    message: "the TLS client key \(privateKey) is encrypted, and Trellis "
                        + "runs unattended: give it an unencrypted copy (openssl pkey -in \(privateKey) -out trellis.key), readable by its user alone"
                )
            }
        }
    }

    /// Throws unless `path` is a readable file (or, when allowed, a readable directory).
    static func checkReadable(_ path: String, what: String, directoryAllowed: Bool) throws(MQTTError) {
        var isDirectory: ObjCBool = false
        let manager = FileManager.default
        let reason: String?
        if path.isEmpty {
            reason = "the name is empty"
        } else if !manager.fileExists(atPath: path, isDirectory: &isDirectory) {
            reason = "no such file"
        } else if isDirectory.boolValue && !directoryAllowed {
            reason = "it is a directory"
        } else if !manager.isReadableFile(atPath: path)
            || (isDirectory.boolValue && (try? manager.contentsOfDirectory(atPath: path)) == nil)
        {
            reason = "permission denied"
        } else if !isDirectory.boolValue && FileHandle(forReadingAtPath: path) == nil {
            reason = "it cannot be opened"
        } else {
            reason = nil
        }
        if let reason {
            throw MQTTError(kind: .invalidArgument, message: "cannot read the \(what) \(path): \(reason)")
        }
    }
}
