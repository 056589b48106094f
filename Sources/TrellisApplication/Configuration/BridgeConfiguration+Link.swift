import Foundation
import TrellisCore
import TrellisMQTT
import Yams

/// How a bridge reaches its upstream broker: TLS for an `mqtts://` URL (`tls_ca`, and `tls_cert`
/// with `tls_key` for a broker that asks for a client certificate) and an account (`username`,
/// with its password in the file `password_file` names, never in the configuration itself).
extension BridgeConfiguration {
    typealias Link = (tls: BridgeTLS?, username: String?, passwordFile: String?)

    /// The link of the bridge with `members` and `url`, or nil with each problem noted under `place`.
    static func link(_ members: Node.Mapping, url: BrokerURL, at place: String, _ problems: inout [String]) -> Link? {
        func text(_ key: String) -> String? {
            members[Node(key)]?.string.flatMap { $0.isEmpty ? nil : $0 }
        }
        let found = problems.count
        if url.username != nil || url.password != nil {
            problems.append(
                "\(place).url: an account goes in username: and its password in a file named by password_file:, "
                    + "not in the URL")
        }
        let files = ["tls_ca", "tls_cert", "tls_key"].filter { text($0) != nil }
        if !url.usesTLS, !files.isEmpty {
            problems.append(
                "\(place): \(files.joined(separator: ", ")) need an mqtts:// url; the link would be plain text")
        }
        if (text("tls_cert") == nil) != (text("tls_key") == nil) {
            problems.append("\(place): tls_cert and tls_key go together, the client certificate and its key")
        }
        if text("password_file") != nil, text("username") == nil {
            problems.append("\(place).password_file needs username:, the account the password is for")
        }
        for key in files + ["password_file"] {
            guard let path = text(key) else { continue }
            if !FileManager.default.isReadableFile(atPath: path) {
                problems.append("\(place).\(key): cannot read \(path)")
            }
        }
        guard problems.count == found else { return nil }
        let tls = url.usesTLS ? BridgeTLS(ca: text("tls_ca"), cert: text("tls_cert"), key: text("tls_key")) : nil
        return (tls, text("username"), text("password_file"))
    }
}
