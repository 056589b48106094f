/// Where a broker is and how to reach it: `mqtt://HOST[:PORT]` (plain, port 1883),
/// `mqtts://HOST[:PORT]` (TLS, port 8883) or the bare `HOST[:PORT]` (plain, 1883). IPv6 literals
/// go in brackets (`mqtts://[::1]:8883`). A user name and password may ride in the URL's user info
/// (`mqtts://name:secret@host`), percent-encoded where they contain `@`, `:` or `/`.
///
/// Parsing is pure: no name lookup and no file access. The credentials never appear in
/// `description` nor in a parse error, which shows the text with its user info masked.
public struct BrokerURL: Sendable, Hashable, CustomStringConvertible {
    public enum Scheme: String, Sendable, Hashable {
        case mqtt, mqtts

        /// The port a URL of this scheme means when it names none.
        public var defaultPort: Int { self == .mqtts ? 8883 : 1883 }
    }

    public var scheme: Scheme
    /// Host name or address; an IPv6 address without its brackets.
    public var host: String
    public var port: Int
    /// From the URL's user info, percent-decoded; nil when the URL has none.
    public var username: String?
    public var password: String?

    public init(
        scheme: Scheme = .mqtt, host: String, port: Int? = nil, username: String? = nil, password: String? = nil
    ) {
        self.scheme = scheme
        self.host = host
        self.port = port ?? scheme.defaultPort
        self.username = username
        self.password = password
    }

    /// Whether the connection is made over TLS.
    public var usesTLS: Bool { scheme == .mqtts }

    /// `mqtts://host:8883`, `mqtt://[::1]:1883`: the address without its credentials, for logs.
    public var description: String {
        "\(scheme.rawValue)://\(hostAndPort)"
    }

    /// `host:port`, with brackets around an IPv6 address.
    public var hostAndPort: String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    /// The forms a broker address may take, for error messages and help texts.
    public static let allowedForms =
        "mqtt://HOST[:PORT] (port 1883), mqtts://HOST[:PORT] (TLS, port 8883) or HOST[:PORT]; "
        + "an IPv6 address in brackets, as in mqtts://[::1]:8883; user:password@ before the host is allowed"
}

/// Why a broker address could not be read. Its text never contains the address's credentials.
public struct BrokerURLError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong, in a few words (`the port 70000 is out of range 1-65535`).
    public var problem: String
    /// The address as given, its user info masked as `***`.
    public var shown: String

    public var description: String {
        "\(shown.isEmpty ? "an empty broker address" : "the broker address \(shown)") is not valid: \(problem); use \(BrokerURL.allowedForms)"
    }
}

extension BrokerURL {
    /// Reads a broker address in any of the allowed forms (see ``BrokerURL``).
    public init(parsing text: String) throws(BrokerURLError) {
        let shown = BrokerURL.masked(text)
        func refuse(_ problem: String) -> BrokerURLError { BrokerURLError(problem: problem, shown: shown) }

        var scheme = Scheme.mqtt
        var rest = Substring(text)
        var explicitScheme = false
        if let separator = text.range(of: "://") {
            let name = text[..<separator.lowerBound]
            guard let known = Scheme(rawValue: name.lowercased()) else {
                throw refuse(
                    name.isEmpty
                        ? "the scheme is missing before ://" : "the scheme \(name):// is not one Trellis speaks")
            }
            scheme = known
            explicitScheme = true
            rest = text[separator.upperBound...]
        } else if let colon = text.firstIndex(of: ":"), text[text.index(after: colon)...].hasPrefix("/") {
            throw refuse("a URL needs :// after its scheme")
        }
        if explicitScheme, let slash = rest.firstIndex(of: "/") {
            guard rest[slash...] == "/" else { throw refuse("a broker URL has no path") }
            rest = rest[..<slash]
        }
        if rest.contains(where: { $0 == "?" || $0 == "#" }) { throw refuse("a broker URL has no query or fragment") }

        var username: String?
        var password: String?
        if let at = rest.lastIndex(of: "@") {
            guard explicitScheme else { throw refuse("user info needs the mqtt:// or mqtts:// form") }
            let info = rest[..<at]
            rest = rest[rest.index(after: at)...]
            let parts = info.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = BrokerURL.percentDecoded(parts[0]),
                let secret = parts.count > 1 ? BrokerURL.percentDecoded(parts[1]) : ""
            else {
                throw refuse("the user info has a bad %-escape")
            }
            guard !name.isEmpty else { throw refuse("the user name before @ is empty") }
            username = name
            password = parts.count > 1 ? secret : nil
        }

        var host: Substring
        var portText: Substring?
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { throw refuse("the [ of an IPv6 address is not closed") }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw refuse("only :PORT may follow an IPv6 address in brackets") }
                portText = after.dropFirst()
            }
            guard host.contains(":"), host.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) else {
                throw refuse("brackets hold an IPv6 address")
            }
        } else {
            if rest.filter({ $0 == ":" }).count > 1 {
                throw refuse("an IPv6 address goes in brackets, as in [::1]:1883")
            }
            if let colon = rest.firstIndex(of: ":") {
                host = rest[..<colon]
                portText = rest[rest.index(after: colon)...]
            } else {
                host = rest
            }
            guard host.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-._".contains($0)) }) else {
                throw refuse("a host name holds only letters, digits, '-', '.' and '_'")
            }
        }
        guard !host.isEmpty else { throw refuse("the host is empty") }
        var port: Int?
        if let portText {
            guard !portText.isEmpty, portText.allSatisfy(\.isASCII), portText.allSatisfy(\.isNumber) else {
                throw refuse("the port must be a number from 1 to 65535")
            }
            guard let value = Int(portText), (1...65535).contains(value) else {
                throw refuse("the port \(portText) is out of range 1-65535")
            }
            port = value
        }
        self.init(scheme: scheme, host: String(host), port: port, username: username, password: password)
    }

    /// `text` with anything between `://` and the last `@` of the authority replaced by `***`,
    /// so no credential reaches a log or an error message.
    public static func masked(_ text: String) -> String {
        let start = text.range(of: "://")?.upperBound ?? text.startIndex
        let authorityEnd = text[start...].firstIndex(where: { "/?#".contains($0) }) ?? text.endIndex
        guard let at = text[start..<authorityEnd].lastIndex(of: "@") else { return text }
        return String(text[..<start]) + "***" + String(text[at...])
    }

    /// Decodes `%XX` escapes; nil when an escape is malformed or the result is not UTF-8.
    static func percentDecoded(_ text: Substring) -> String? {
        var bytes: [UInt8] = []
        var index = text.utf8.startIndex
        let utf8 = text.utf8
        while index != utf8.endIndex {
            let byte = utf8[index]
            if byte == UInt8(ascii: "%") {
                let first = utf8.index(after: index)
                guard first != utf8.endIndex else { return nil }
                let second = utf8.index(after: first)
                guard second != utf8.endIndex,
                    let high = hexValue(utf8[first]), let low = hexValue(utf8[second])
                else { return nil }
                bytes.append(high << 4 | low)
                index = utf8.index(after: second)
            } else {
                bytes.append(byte)
                index = utf8.index(after: index)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
