import Foundation
import TrellisMQTT

/// Where `trellis run` connects: `broker.address` read as a ``BrokerURL``, its TLS files, and the
/// rules that tie them together.
extension EffectiveConfiguration {
    /// The broker to join; nil when Trellis starts its own (`broker.address` empty). The address
    /// was validated by `load`, so this only fails on a configuration made some other way.
    package var brokerURL: BrokerURL? {
        let text = string("broker.address")
        guard !text.isEmpty else { return nil }
        return try? BrokerURL(parsing: text)
    }

    /// The TLS settings for an `mqtts://` address, nil for a plain one.
    package var tls: MQTTTLSConfiguration? {
        guard brokerURL?.usesTLS == true else { return nil }
        func file(_ key: String) -> String? {
            let value = string(key)
            return value.isEmpty ? nil : value
        }
        return MQTTTLSConfiguration(
            certificateAuthorities: file("broker.tls.ca"),
            certificate: file("broker.tls.cert"), privateKey: file("broker.tls.key"))
    }

    /// Problems between keys: TLS files without an `mqtts://` address (they would be ignored, and
    /// the connection silently in plain text), a client certificate without its key, and a packet
    /// bound too small for the code bound (``leastPacketBytes(forCode:)``).
    package func brokerProblems() -> [String] {
        let tlsKeys = ["broker.tls.ca", "broker.tls.cert", "broker.tls.key"].filter { !string($0).isEmpty }
        var problems: [String] = []
        if !tlsKeys.isEmpty && brokerURL?.usesTLS != true {
            let address = string("broker.address")
            problems.append(
                "\(tlsKeys.joined(separator: ", ")) (from \(tlsKeys.map(describeSource).joined(separator: ", "))) "
                    + (tlsKeys.count == 1 ? "needs" : "need") + " an mqtts:// broker.address, and it is "
                    + (address.isEmpty
                        ? "empty (Trellis starts its own broker)"
                        : EffectiveConfiguration.shown("broker.address", .string(address)))
                    + ": write mqtts://HOST[:PORT] to connect over TLS")
        }
        if string("broker.tls.cert").isEmpty != string("broker.tls.key").isEmpty {
            problems.append(
                string("broker.tls.cert").isEmpty
                    ? "broker.tls.key needs broker.tls.cert (--tls-cert), the certificate it belongs to"
                    : "broker.tls.cert needs broker.tls.key (--tls-key), its private key")
        }
        // A code upload the broker holds back gets no answer, not even too_large.
        let least = Self.leastPacketBytes(forCode: int("devices.max_code_bytes"))
        if int("broker.max_packet_bytes") < least {
            problems.append(
                "\(withSource("broker.max_packet_bytes")) is too small: \(withSource("devices.max_code_bytes")) needs "
                    + "packets of at least \(least) bytes (twice the code, for a model build's device and agent code, "
                    + "and 64 KiB for its envelope), or the broker holds a code upload back from Trellis, unanswered; "
                    + "raise broker.max_packet_bytes or lower devices.max_code_bytes")
        }
        return problems
    }

    /// The least `broker.max_packet_bytes` for code of at most `codeBytes`: a model build carries a
    /// device code and an agent code, each up to `devices.max_code_bytes`, in a JSON envelope, for
    /// which (and for the escaping of the code's quotes and line ends) 64 KiB more are allowed.
    package static func leastPacketBytes(forCode codeBytes: Int) -> Int {
        2 * codeBytes + 65_536
    }

    /// `key = value (from its source)`, as a refusal names a setting.
    private func withSource(_ key: String) -> String {
        "\(key) = \(int(key)) (from \(describeSource(key)))"
    }

    private func describeSource(_ key: String) -> String {
        guard let setting = SettingKey.byKey[key] else { return key }
        return EffectiveConfiguration.describe(source(key), setting: setting, file: file)
    }
}
