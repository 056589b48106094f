#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Whose a dead letter is, for the per-client quota of dead letters: one client's flood then
/// evicts only its own older letters, never another's.
///
/// The owner is the identity the topic names where it names one (`<plant>/torpi/<client>`,
/// `<buttons>/clients/<client>/…`, `<buttons>/buttons/<button>/press`, `<trellis>/clients/<client>/…`,
/// `devices/<id>/…`): in the secure profile the broker's ACL lets only that account publish there.
/// The shared plant topic is one owner, `shared:plant`, whatever `sender` its payloads claim (a
/// client varies that at will, and could otherwise spread a flood over any number of quotas until
/// the total cap evicted everyone's letters); anything else (an unknown topic, a shared JSON
/// request) shares the empty owner. So anonymous floods evict only anonymous letters.
public struct DeadLetterOwner: Sendable, Hashable {
    public var plantPrefix: String
    public var buttonPrefix: String
    public var trellisPrefix: String

    public init(plantPrefix: String, buttonPrefix: String, trellisPrefix: String) {
        (self.plantPrefix, self.buttonPrefix, self.trellisPrefix) = (plantPrefix, buttonPrefix, trellisPrefix)
    }

    /// The owner of a letter on `topic`: `client:<id>`, `button:<id>`, `device:<id>`,
    /// `shared:plant`, or `""` for none. Prefixes may have several levels (`home/rpi`).
    public func owner(topic: String, payload: [UInt8]) -> String {
        /// The levels after `prefix`, when the topic starts with it.
        func levels(after prefix: String) -> [Substring]? {
            guard topic.utf8.count > prefix.utf8.count, topic.utf8.starts(with: prefix.utf8),
                topic.utf8.dropFirst(prefix.utf8.count).first == UInt8(ascii: "/")
            else { return nil }
            let rest = topic.utf8.dropFirst(prefix.utf8.count + 1)
            return Substring(rest).split(separator: "/", omittingEmptySubsequences: false)
        }
        if let rest = levels(after: plantPrefix), rest.first == "torpi" {
            if rest.count == 1 { return "shared:plant" }
            return rest.count == 2 && !rest[1].isEmpty ? "client:" + rest[1] : ""
        }
        if let rest = levels(after: buttonPrefix), rest.count >= 3, !rest[1].isEmpty {
            if rest[0] == "clients" { return "client:" + rest[1] }
            if rest[0] == "buttons" { return "button:" + rest[1] }
        }
        if let rest = levels(after: trellisPrefix), rest.count >= 3, rest[0] == "clients", !rest[1].isEmpty {
            return "client:" + rest[1]
        }
        if let rest = levels(after: "devices"), rest.count >= 2, !rest[0].isEmpty {
            return "device:" + rest[0]
        }
        return ""
    }
}
