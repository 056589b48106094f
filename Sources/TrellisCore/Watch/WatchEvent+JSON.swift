extension WatchEvent {
    /// The event as one compact JSON object, written by hand: the stream writes one per handled
    /// message while someone watches, and `JSONEncoder` spends several times as long on it. The
    /// same object `Codable` reads back (a test keeps the two equal); absent values are left out.
    public func json() -> [UInt8] {
        var out = "{"
        func member(_ key: String, _ value: String) {
            if out.utf8.count > 1 { out += "," }
            out += "\"" + key + "\":" + value
        }
        member("seq", "\(seq)")
        member("at", JSONText.string(at))
        member("relay", JSONText.string(relay))
        member("topic", JSONText.string(topic))
        member("service", JSONText.string(service))
        if let client { member("client", JSONText.string(client)) }
        if let request { member("request", JSONText.string(request)) }
        member("summary", JSONText.string(summary))
        member(
            "fields",
            "{"
                + fields.sorted { $0.key < $1.key }.map { JSONText.string($0.key) + ":" + JSONText.string($0.value) }
                .joined(separator: ",") + "}")
        member("verdict", JSONText.string(verdict.rawValue))
        if let reason { member("reason", JSONText.string(reason)) }
        member(
            "replies",
            "["
                + replies.map {
                    "{\"topic\":" + JSONText.string($0.topic) + ",\"summary\":" + JSONText.string($0.summary) + "}"
                }
                .joined(separator: ",") + "]")
        if let fanOut { member("fan_out", "\(fanOut)") }
        member("payload", JSONText.string(payload))
        if let size { member("size", "\(size)") }
        member("qos", "\(qos)")
        member("retain", retain ? "true" : "false")
        return Array((out + "}").utf8)
    }
}
