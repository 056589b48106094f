/// Where an HTTP server of Trellis listens (`--metrics`, `--health`, `--socketio`): `HOST:PORT`,
/// `[IPv6]:PORT`, or a port alone, which means 127.0.0.1. Unlike a broker address, a port is
/// required with a host: `localhost` alone would otherwise take the MQTT port, 1883.
public struct ListenAddress: Sendable, Equatable, CustomStringConvertible {
    public var host: String
    public var port: Int

    /// The form to name in an error.
    public static let expected = "HOST:PORT such as 127.0.0.1:9464, [::1]:9464, or a port alone (127.0.0.1)"

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// Nil when `text` is not one of the three forms, or the port is not 1 to 65535.
    public init?(_ text: String) {
        if let port = Int(text) {
            guard (1...65535).contains(port) else { return nil }
            self.init(host: "127.0.0.1", port: port)
            return
        }
        let host: Substring, portText: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            host = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            guard rest.hasPrefix(":") else { return nil }
            portText = rest.dropFirst()
        } else {
            let parts = text.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count == 2 else { return nil }
            host = parts[0]
            portText = parts[1]
        }
        guard !host.isEmpty, !host.contains(where: \.isWhitespace), let port = Int(portText), (1...65535).contains(port)
        else {
            return nil
        }
        self.init(host: String(host), port: port)
    }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
