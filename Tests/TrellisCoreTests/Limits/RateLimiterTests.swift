import Testing
@testable import TrellisCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

@Suite("RateLimiter")
struct RateLimiterTests {
    @Test("a key may send its burst at once, then is refused until it earns a token back")
    func burstThenRate() {
        var limiter = RateLimiter(RateLimit(rate: 2, burst: 3))
        #expect((0..<3).map { _ in limiter.admit("a", at: at(0)) } == [.allowed, .allowed, .allowed])
        #expect(limiter.admit("a", at: at(0)) == .refused(first: true, retryAfter: 0.5))
        #expect(limiter.admit("a", at: at(0.25)) == .refused(first: false, retryAfter: 0.25))
        // Refusals cost nothing: half a second after the burst one token is back.
        #expect(limiter.admit("a", at: at(0.5)) == .allowed)
        #expect(limiter.admit("a", at: at(0.5)) == .refused(first: true, retryAfter: 0.5))
    }

    @Test("keys are limited apart: one key's flood leaves another's allowance whole")
    func keysApart() {
        var limiter = RateLimiter(RateLimit(rate: 1, burst: 2))
        for _ in 0..<1_000 { _ = limiter.admit("flood", at: at(0)) }
        #expect(limiter.admit("quiet", at: at(0)) == .allowed)
        #expect(limiter.admit("quiet", at: at(0)) == .allowed)
        #expect(limiter.admit("quiet", at: at(0)) != .allowed)
    }

    @Test("a key that keeps flooding gets its rate and no more")
    func steadyFlood() {
        var limiter = RateLimiter(RateLimit(rate: 10, burst: 5))
        var allowed = 0
        // 100 messages a second for 10 seconds.
        for tick in 0..<1_000 where limiter.admit("a", at: at(Double(tick) / 100)) == .allowed { allowed += 1 }
        #expect(allowed >= 100 && allowed <= 106, "\(allowed)")
    }

    @Test("a full bucket never grows past the burst, however long the pause")
    func capped() {
        var limiter = RateLimiter(RateLimit(rate: 1, burst: 2))
        _ = limiter.admit("a", at: at(0))
        let afterPause = (0..<3).map { _ in limiter.admit("a", at: at(3_600)) }
        #expect(afterPause.prefix(2).allSatisfy { $0 == .allowed })
        #expect(afterPause[2] != .allowed)
    }

    @Test("rate 0 turns the limit off")
    func off() {
        var limiter = RateLimiter(RateLimit(rate: 0, burst: 1))
        #expect((0..<10_000).allSatisfy { _ in limiter.admit("a", at: at(0)) == .allowed })
        #expect(limiter.trackedKeys == 0)
    }

    @Test("keys whose bucket filled again are forgotten: memory follows the keys active within one refill")
    func bounded() {
        var limiter = RateLimiter(RateLimit(rate: 10, burst: 10))
        for index in 0..<10_000 { _ = limiter.admit("k\(index)", at: at(Double(index) / 1_000)) }
        // Refill takes 1 s, so at most the last ~2 s of keys (a sweep runs at most once a refill) are held.
        #expect(limiter.trackedKeys <= 2_000, "\(limiter.trackedKeys)")
        _ = limiter.admit("late", at: at(100))
        #expect(limiter.trackedKeys == 1)
    }

    @Test("a clock that steps back neither refunds nor charges tokens")
    func clockBack() {
        var limiter = RateLimiter(RateLimit(rate: 1, burst: 1))
        #expect(limiter.admit("a", at: at(10)) == .allowed)
        #expect(limiter.admit("a", at: at(5)) != .allowed)
        #expect(limiter.admit("a", at: at(11)) == .allowed)
    }
}

@Suite("NoticeThrottle")
struct NoticeThrottleTests {
    @Test("the first refusal of a key is logged, then at most one a minute with the count passed over")
    func oncePerMinute() {
        var throttle = NoticeThrottle()
        #expect(throttle.notice("a", at: at(0)) == 0)
        #expect((1..<50).allSatisfy { throttle.notice("a", at: at(Double($0))) == nil })
        #expect(throttle.notice("b", at: at(30)) == 0)
        #expect(throttle.notice("a", at: at(60)) == 49)
        #expect(throttle.notice("a", at: at(61)) == nil)
    }

    @Test("keys are bounded however many clients are refused")
    func bounded() {
        var throttle = NoticeThrottle(interval: 60, maximumKeys: 100)
        for index in 0..<10_000 { _ = throttle.notice("k\(index)", at: at(Double(index) / 1_000)) }
        #expect(throttle.trackedKeys <= 100)
    }
}

@Suite("DeadLetterOwner")
struct DeadLetterOwnerTests {
    let owners = DeadLetterOwner(plantPrefix: "rpi", buttonPrefix: "p2o", trellisPrefix: "trellis")

    @Test(
        "the identity a topic names owns its letter; the shared plant topic is one owner whatever its senders; the rest share one",
        arguments: [
            ("rpi/torpi/alice", "ID:1;sender:mallory;receiver:x;payload:;operation:REQ_x", "client:alice"),
            ("rpi/torpi", "ID:1;sender:bob;receiver:x;payload:;operation:REQ_x", "shared:plant"),
            ("rpi/torpi", "ID:1;sender:mallory;receiver:x;payload:;operation:REQ_x", "shared:plant"),
            ("rpi/torpi", "no fields at all", "shared:plant"),
            ("rpi/torpi/a/b", "x", ""),
            ("p2o/clients/phone/register", "x", "client:phone"),
            ("p2o/buttons/door/press", "x", "button:door"),
            ("trellis/clients/ops/request/devices/list", "{}", "client:ops"),
            ("trellis/request/devices/list", "{}", ""),
            ("devices/node7/log", "x", "device:node7"),
            ("some/unknown/topic", "x", ""),
            ("p2o/clients//register", "x", "")
        ])
    func owner(_ topic: String, _ payload: String, _ expected: String) {
        #expect(owners.owner(topic: topic, payload: Array(payload.utf8)) == expected)
    }

    @Test("prefixes of several levels are matched whole")
    func multiLevelPrefixes() {
        let home = DeadLetterOwner(plantPrefix: "home/rpi", buttonPrefix: "home/p2o", trellisPrefix: "home/trellis")
        #expect(home.owner(topic: "home/rpi/torpi/alice", payload: []) == "client:alice")
        #expect(home.owner(topic: "home/p2o/clients/phone/register", payload: []) == "client:phone")
        #expect(home.owner(topic: "home/trellis/clients/ops/request/x", payload: []) == "client:ops")
        #expect(home.owner(topic: "home/rpiX/torpi/alice", payload: []) == "")
    }

    @Test("a share group's relays each allow their part of a limit: 1/N of the rate and of the burst, rounded up")
    func shareAmongRelays() {
        let limit = RateLimit(rate: 50, burst: 200)
        #expect(limit.share(among: 1) == limit)
        #expect(limit.share(among: 0) == limit)
        #expect(limit.share(among: 2) == RateLimit(rate: 25, burst: 100))
        #expect(limit.share(among: 3) == RateLimit(rate: 50.0 / 3, burst: 67))
        #expect(RateLimit(rate: 1, burst: 1).share(among: 4) == RateLimit(rate: 0.25, burst: 1), "never below one")
        // Three relays taking a client's messages in turn allow about the whole burst between them.
        var parts = (0..<3).map { _ in RateLimiter(limit.share(among: 3)) }
        let allowed = (0..<300).filter { parts[$0 % 3].admit("c", at: at(0)) == .allowed }.count
        #expect(allowed == 201)
    }
}
