import Testing
@testable import TrellisCore

@Suite("SensorAddress")
struct SensorAddressTests {
    @Test(
        "sensor addresses normalize to 0x and two lowercase hex digits",
        arguments: [
            ("0x36", "0x36"), ("0X36", "0x36"), ("0x3A", "0x3a"), ("0x3a", "0x3a"), ("0X3a", "0x3a"),
            ("0x03", "0x03"), ("0x77", "0x77"), ("0x3", "0x03"), ("0x5", "0x05"), ("0xf", "0x0f")
        ])
    func validAddresses(_ input: String, _ expected: String) {
        #expect(SensorAddress.normalize(input) == expected)
    }

    @Test(
        "invalid sensor addresses",
        arguments: [
            "", "0x", "0x0", "0x00", "0x02", "0x2", "0x78", "0x7F", "0xff", "36", "x36", "0y36", "0x036",
            " 0x36", "0x36 ", "0xg1", "0x-1", "0x+3", "０x36", "0x３6"
        ])
    func invalidAddresses(_ input: String) {
        #expect(SensorAddress.normalize(input) == nil)
    }

    @Test("formatting every valid address round-trips through normalize")
    func formatRoundTrip() {
        for value in SensorAddress.minimum...SensorAddress.maximum {
            let text = SensorAddress.format(value)
            #expect(text.utf8.count == 4)
            #expect(SensorAddress.normalize(text) == text)
            #expect(SensorAddress.normalize(text.uppercased()) == text)
        }
    }

    @Test(
        "sensor topics yield normalized addresses",
        arguments: [
            ("rpi/sensors/0x36", "0x36"),
            ("rpi/sensors/0X3A", "0x3a"),
            ("rpi/sensors/0x5", "0x05")
        ])
    func validTopics(_ topic: String, _ expected: String) {
        #expect(SensorAddress.fromTopic(topic) == expected)
        #expect(SensorAddress.topic(for: expected) == "rpi/sensors/" + expected)
    }

    @Test(
        "other topics yield nothing",
        arguments: [
            "rpi/sensors/", "rpi/sensors/0x36/extra", "rpi/sensors/0x78", "rpi/sensors/fern", "rpi/torpi",
            "rpi/sensor/0x36", "/rpi/sensors/0x36", "RPI/sensors/0x36", ""
        ])
    func invalidTopics(_ topic: String) {
        #expect(SensorAddress.fromTopic(topic) == nil)
    }

    @Test("the subscription filter covers one topic level")
    func filter() {
        #expect(SensorAddress.topicFilter == "rpi/sensors/+")
    }
}
