import TrellisCore

/// What both stores need to turn a ``DeadLetterQuery`` into an index range.
extension DeadLetterQuery {
    /// The smallest text above every topic that starts with ``topicPrefix``, nil when there is none
    /// (no prefix, or one ending in U+10FFFF): the prefix with its last character replaced by the
    /// next one. Text compares byte by byte in both stores (SQLite's `BINARY`, PostgreSQL's
    /// `COLLATE "C"`), and UTF-8's byte order is the order of the characters, so
    /// `prefix <= topic < bound` holds exactly for the topics that start with the prefix and lets
    /// the `(topic, id)` index serve the filter.
    package var topicUpperBound: String? {
        guard let prefix = topicPrefix, let last = prefix.unicodeScalars.last else { return nil }
        var next = last.value + 1
        if (0xD800...0xDFFF).contains(next) { next = 0xE000 }
        guard let scalar = Unicode.Scalar(next) else { return nil }
        var scalars = String.UnicodeScalarView(prefix.unicodeScalars.dropLast())
        scalars.append(scalar)
        return String(scalars)
    }
}
