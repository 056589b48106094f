import Testing
import TrellisCore

/// Whether two filters share a topic: what keeps a bridge's `in` rule off the topics only Trellis
/// publishes. Each pair is checked both ways round, against a topic that matches both when they do.
@Suite("Topic filters that overlap")
struct TopicFilterOverlapTests {
    @Test(
        "overlapping pairs, with a topic both match",
        arguments: [
            ("a/b", "a/b", "a/b"), ("a/+", "a/b", "a/b"), ("a/#", "a/b/c", "a/b/c"), ("a/#", "a", "a"),
            ("#", "x/y", "x/y"), ("+/b", "a/+", "a/b"), ("commands/#", "+/+/#", "commands/x/y"),
            ("p2o/clients/+/button-press", "p2o/#", "p2o/clients/c/button-press")
        ])
    func overlapping(one: String, two: String, topic: String) {
        #expect(TopicFilter(one).overlaps(TopicFilter(two)))
        #expect(TopicFilter(two).overlaps(TopicFilter(one)))
        #expect(TopicFilter(one).match(topic) != nil && TopicFilter(two).match(topic) != nil)
    }

    @Test(
        "filters that share no topic",
        arguments: [
            ("a/b", "a/c"), ("a/+", "a/b/c"), ("a/b/#", "a/c/#"), ("commands/#", "devices/+/command"),
            ("a", "a/b"), ("a/+/c", "a/b/d"), ("+", "a/b"), ("a/b", "a/b/")
        ])
    func apart(one: String, two: String) {
        #expect(!TopicFilter(one).overlaps(TopicFilter(two)))
        #expect(!TopicFilter(two).overlaps(TopicFilter(one)))
    }
}
