import Foundation
import Testing

/// Files of the Debian package that can be checked without building it (`make deb-check` builds and
/// installs the package itself).
@Suite("The Debian package's files")
struct PackagingTests {
    /// What Trellis needs of a broker, as broker.conf sets it.
    static let brokerKeys = [
        "listener", "allow_anonymous", "set_tcp_nodelay", "persistence", "autosave_interval",
        "max_queued_messages", "max_queued_bytes", "max_inflight_messages", "max_packet_size"
    ]

    @Test(
        "the Mosquitto snippet sets what broker.conf sets for Trellis: the loopback listener, queues, in-flight window, persistence"
    )
    func snippetAgreesWithBrokerConf() throws {
        let snippet = try Self.settings(of: "deploy/mosquitto-trellis.conf")
        let broker = try Self.settings(of: "broker.conf")
        for key in Self.brokerKeys {
            #expect(snippet[key] != nil, "deploy/mosquitto-trellis.conf does not set \(key)")
            #expect(
                snippet[key] == broker[key],
                "\(key): the snippet says \(snippet[key] ?? []), broker.conf \(broker[key] ?? [])")
        }
        #expect(snippet["listener"] == ["1883 127.0.0.1"])
        // Debian's mosquitto.conf sets these; a second persistence_location would stop Mosquitto.
        for key in ["persistence_location", "pid_file", "log_dest", "user", "include_dir"] {
            #expect(snippet[key] == nil, "the snippet sets \(key), which Debian's mosquitto.conf owns")
        }
    }

    @Test("every Swift package linked into the binary is named in the package's copyright file")
    func copyrightNamesEveryDependency() throws {
        let root = MarkdownDocument.repositoryRoot
        let copyright = try String(
            contentsOf: root.appendingPathComponent("packaging/debian/copyright"), encoding: .utf8)
        let resolved = try String(contentsOf: root.appendingPathComponent("Package.resolved"), encoding: .utf8)
        let identities = resolved.matches(of: #/"identity" : "([^"]+)"/#).map { String($0.1) }
        #expect(identities.count >= 10)
        for identity in identities {
            #expect(copyright.lowercased().contains(identity), "packaging/debian/copyright does not name \(identity)")
        }
    }

    /// The values of each key in a Mosquitto configuration file, in order (comments and blank lines skipped).
    static func settings(of path: String) throws -> [String: [String]] {
        let text = try String(contentsOf: MarkdownDocument.repositoryRoot.appendingPathComponent(path), encoding: .utf8)
        var settings: [String: [String]] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            let parts = line.split(separator: " ", maxSplits: 1)
            guard parts.count == 2 else { continue }
            settings[String(parts[0]), default: []].append(String(parts[1]))
        }
        return settings
    }
}
