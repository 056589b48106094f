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
/// On the shared plant topic the payload's `sender` stands in; anything else (an unknown topic, a
/// shared JSON request) shares one owner, the empty one, so anonymous floods evict only anonymous letters.
public struct DeadLetterOwner: Sendable, Hashable {
    public var plantPrefix: String
    public var buttonPrefix: String
    public var trellisPrefix: String

    public init(plantPrefix: String, buttonPrefix: String, trellisPrefix: String) {
        self.plantPrefix = plantPrefix
        self.buttonPrefix = buttonPrefix
        self.trellisPrefix = trellisPrefix
    }

    /// The owner of a letter on `topic` with `payload`: `client:<id>`, `button:<id>`,
    /// `device:<id>`, `sender:<name>`, or `""` for none.
    public func owner(topic: String, payload: [UInt8]) -> String {
        let levels = topic.split(separator: "/", omittingEmptySubsequences: false)
        let prefix = String(levels.first ?? "")
        guard levels.count >= 2 else { return "" }
        switch (prefix, levels[1]) {
        case (plantPrefix, "torpi"):
            if levels.count == 3, !levels[2].isEmpty { return "client:" + levels[2] }
            return Self.plantSender(payload).map { "sender:" + $0 } ?? ""
        case (buttonPrefix, "clients") where levels.count >= 4 && !levels[2].isEmpty,
             (trellisPrefix, "clients") where levels.count >= 4 && !levels[2].isEmpty:
            return "client:" + levels[2]
        case (buttonPrefix, "buttons") where levels.count >= 4 && !levels[2].isEmpty:
            return "button:" + levels[2]
        case ("devices", _) where !levels[1].isEmpty && levels.count >= 3:
            return "device:" + levels[1]
        default:
            return ""
        }
    }

    /// The `sender` of a plant message (`…;sender:<name>;…`), at most 64 bytes of it; nil when none.
    static func plantSender(_ payload: [UInt8]) -> String? {
        let key = Array("sender:".utf8)
        var start: Int?
        var index = 0
        while index + key.count <= payload.count {
            if (index == 0 || payload[index - 1] == 0x3B), payload[index..<(index + key.count)].elementsEqual(key) {
                start = index + key.count
                break
            }
            guard let next = payload[index...].firstIndex(of: 0x3B) else { return nil }
            index = next + 1
        }
        guard let start else { return nil }
        let end = payload[start...].firstIndex(of: 0x3B) ?? payload.count
        guard end > start else { return nil }
        return String(decoding: payload[start..<min(end, start + 64)], as: UTF8.self)
    }
}
