import Testing
import TrellisMQTT

/// `MQTTProperties` keeps its four values in one shared box: it must still behave as a plain
/// value, each copy changed alone, equal and hashed by what it holds.
@Suite("MQTT properties")
struct MQTTPropertiesTests {
    /// Each property set on its own, as a change of an empty value.
    static let changes: [(name: String, change: @Sendable (inout MQTTProperties) -> Void)] = [
        ("response topic", { $0.responseTopic = "replies/1" }),
        ("correlation data", { $0.correlationData = [1, 2, 3] }),
        ("user properties", { $0.userProperties = [UserProperty("k", "v")] }),
        ("content type", { $0.contentType = "text/plain" })
    ]

    @Test("a change to one copy leaves the others as they were", arguments: changes.indices)
    func copiesChangeAlone(index: Int) {
        let original = MQTTProperties(
            responseTopic: "a", correlationData: [9], userProperties: [UserProperty("x", "y")],
            contentType: "application/json")
        var copy = original
        Self.changes[index].change(&copy)
        #expect(copy != original, "\(Self.changes[index].name)")
        #expect(
            original
                == MQTTProperties(
                    responseTopic: "a", correlationData: [9], userProperties: [UserProperty("x", "y")],
                    contentType: "application/json"))
        var empty = MQTTProperties()
        Self.changes[index].change(&empty)
        #expect(!empty.isEmpty)
        #expect(MQTTProperties().isEmpty)
    }

    @Test("values set through the initializer or one by one are equal and hash alike")
    func equalityAndHash() {
        var stepwise = MQTTProperties()
        stepwise.responseTopic = "r"
        stepwise.correlationData = [7]
        stepwise.userProperties.append(UserProperty("k", "v"))
        stepwise.contentType = "c"
        let whole = MQTTProperties(
            responseTopic: "r", correlationData: [7], userProperties: [UserProperty("k", "v")], contentType: "c")
        #expect(stepwise == whole)
        #expect(stepwise.hashValue == whole.hashValue)
        #expect(Set([stepwise, whole]).count == 1)
        #expect(stepwise.responseTopic == "r" && stepwise.correlationData == [7] && stepwise.contentType == "c")
        #expect(stepwise.userProperties == [UserProperty("k", "v")])
    }

    @Test("changes in place (appending user properties one by one) leave other copies as they were")
    func changesInPlace() {
        var properties = MQTTProperties()
        var expected: [UserProperty] = []
        var kept: [MQTTProperties] = []
        for index in 0..<1_000 {
            properties.userProperties.append(UserProperty("k\(index)", "v"))
            expected.append(UserProperty("k\(index)", "v"))
            if index.isMultiple(of: 250) { kept.append(properties) }
        }
        #expect(properties == MQTTProperties(userProperties: expected))
        #expect(kept.map(\.userProperties.count) == [1, 251, 501, 751], "each copy keeps what it had when it was taken")
        var shared = properties
        shared.correlationData?.append(1)
        shared.userProperties[0].value = "changed"
        #expect(properties.userProperties[0].value == "v" && shared.userProperties[0].value == "changed")
        shared.userProperties.removeAll()
        #expect(shared.isEmpty && shared == MQTTProperties() && shared.hashValue == MQTTProperties().hashValue)
        #expect(properties.userProperties.count == 1_000)
    }

    @Test("clearing every value gives back the empty value")
    func clearedIsEmpty() {
        var properties = MQTTProperties(responseTopic: "r", contentType: "c")
        let kept = properties
        properties.responseTopic = nil
        #expect(!properties.isEmpty)
        properties.contentType = nil
        #expect(properties.isEmpty)
        #expect(properties == MQTTProperties())
        #expect(properties.hashValue == MQTTProperties().hashValue)
        #expect(kept.responseTopic == "r" && kept.contentType == "c", "the copy taken before is untouched")
    }
}
