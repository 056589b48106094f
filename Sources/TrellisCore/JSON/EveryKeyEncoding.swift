extension Encoder {
    /// Encodes each value under its key, in the order given, and `null` for a nil one.
    ///
    /// Synthesized conformances leave a nil member's key out; the replies clients read have every
    /// key, `null` for what is unknown, so their types encode through this table instead.
    public func encodeEveryKey<Key: CodingKey>(_ members: KeyValuePairs<Key, any Encodable>) throws {
        var container = container(keyedBy: Key.self)
        for (key, value) in members { try container.encode(value, forKey: key) }
    }
}
