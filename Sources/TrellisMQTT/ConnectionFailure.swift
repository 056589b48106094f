/// Turns what libmosquitto reported about a failed connection attempt (its result code's text and
/// the error lines it logged, OpenSSL's among them) into one sentence a user can act on: the broker's
/// certificate is not trusted, it does not name the host, the broker wants (or refused) a client
/// certificate. OpenSSL's own words follow in brackets.
enum ConnectionFailure {
    /// The sentence for one attempt. `errors` are libmosquitto's error log lines; an OpenSSL line
    /// may end with `[certificate check: …]`, OpenSSL's verdict on the broker's certificate.
    /// `afterOpen` says the TCP connection was made (the failure came while the TLS handshake or
    /// the CONNECT was under way); `clientCertificate` whether one was configured.
    static func describe(
        code: Int32, libraryText: String, errors: [String], host: String, tls: Bool,
        afterOpen: Bool = false, clientCertificate: Bool = false
    ) -> String {
        let openSSL = errors.filter { $0.hasPrefix("OpenSSL Error") }
        let library = errors.filter { !$0.hasPrefix("OpenSSL Error") }
        guard tls else { return libraryText }
        guard !errors.isEmpty else {
            guard afterOpen else { return libraryText }
            // With TLS 1.3 a broker checks the client's certificate after the client has finished its
            // half of the handshake, then sends an alert and closes. When the client's next write
            // meets the closed socket first, the alert is lost and only the closing is seen.
            return "TLS: the broker closed the connection before answering the CONNECT (\(libraryText)); "
                + (clientCertificate
                    ? "it may have refused the client certificate: check that the broker's cafile signed it"
                    : "a broker does this when it requires a client certificate (--tls-cert, --tls-key) and none was sent")
        }
        let all = errors.joined(separator: " ").lowercased()
        let check = openSSL.lazy.compactMap(verdict).first
        let reason: String
        if all.contains("host name verification failed") {
            reason = "the broker's certificate does not name the host \(host)"
        } else if all.contains("certificate verify failed") {
            if check == nil || check == "ok" || check == "unspecified certificate verification error" {
                reason = "the broker's certificate does not name the host \(host) (or the address connected to)"
            } else if let check, check.contains("expired") || check.contains("not yet valid") {
                reason = "the broker's certificate is out of its validity period (\(check))"
            } else {
                reason = "the broker's certificate is not signed by a trusted CA (\(check ?? "unknown"))"
            }
        } else if all.contains("alert certificate required") {
            reason = "the broker requires a client certificate (--tls-cert, --tls-key) and none was sent"
        } else if all.contains("alert unknown ca") || all.contains("alert bad certificate")
            || all.contains("alert certificate unknown") || all.contains("alert handshake failure")
            || all.contains("alert decrypt error") || all.contains("alert access denied")
        {
            reason = "the broker refused the TLS handshake or the client certificate"
        } else if all.contains("wrong version number") || all.contains("packet length too long")
            || all.contains("record layer failure")
            || all.contains("unexpected eof")
        {
            reason = "the broker closed the connection or answered without TLS: is this port its TLS listener?"
        } else if all.contains("key values mismatch") || all.contains("inconsistent") {
            reason = "the client certificate and key do not belong together"
        } else if let line = library.first {
            reason = line.hasPrefix("Error: ") ? String(line.dropFirst("Error: ".count)) : line
        } else {
            reason = "the TLS handshake failed"
        }
        let details = openSSL.map(stripped).filter { !$0.isEmpty }
        return "TLS: \(reason)" + (details.isEmpty ? "" : " [OpenSSL: \(details.joined(separator: "; "))]")
    }

    /// The `[certificate check: …]` part of a line, if any.
    static func verdict(_ line: String) -> String? {
        guard let start = line.range(of: "[certificate check: "), line.hasSuffix("]") else { return nil }
        return String(line[start.upperBound..<line.index(before: line.endIndex)])
    }

    /// The OpenSSL message without libmosquitto's prefix and the appended verdict:
    /// `error:0A000086:SSL routines::certificate verify failed`.
    static func stripped(_ line: String) -> String {
        var text = Substring(line)
        if let colon = text.range(of: "]: ") { text = text[colon.upperBound...] }
        if let verdict = text.range(of: " [certificate check: ") { text = text[..<verdict.lowerBound] }
        return String(text)
    }
}
