import TrellisCore
import TrellisWire

/// What importing a capture gave, split by kind.
struct Imported {
    var messages: [WireMessage] = []
    var problems: [WireProblem] = []
    var statistics = WireImport.Statistics()

    var inputs: [CaptureRecord] { messages.filter { $0.direction == .toBroker }.map(\.record) }
    var deliveries: [CaptureRecord] { messages.filter { $0.direction == .toClient }.map(\.record) }
    var topics: [String] { inputs.map(\.topic) }
    var texts: [String] { inputs.map { $0.text ?? "" } }

    /// Imports `bytes` fed in chunks of `chunk` bytes (small chunks cut every header somewhere).
    init(_ bytes: [UInt8], ports: Set<UInt16> = [1883], version: MQTTWireVersion? = nil, chunk: Int = 4096) {
        var importer = WireImport(ports: ports, assumedVersion: version)
        var events: [WireImport.Event] = []
        var offset = 0
        while offset < bytes.count {
            events += importer.push(bytes[offset..<min(bytes.count, offset + chunk)])
            offset += chunk
        }
        events += importer.finish()
        for event in events {
            switch event {
            case let .message(message): messages.append(message)
            case let .problem(problem): problems.append(problem)
            }
        }
        statistics = importer.statistics
    }
}

/// The traffic of one client: CONNECT, then `count` QoS 0 publishes on sensors/<n>, then close.
func clientConnection(
    client: String = "plant-app", count: Int = 3, level: UInt8 = 4, ipv6: Bool = false,
    configure: (inout ConnectionBuilder) -> Void = { _ in }
) -> ConnectionBuilder {
    var connection = ConnectionBuilder(ipv6: ipv6)
    configure(&connection)
    connection.open()
    connection.send(MQTTBuilder.connect(clientID: client, level: level))
    connection.send([0x20, 2, 0, 0], toBroker: false)
    for index in 0..<count {
        connection.send(
            MQTTBuilder.publish("sensors/\(index)", Array("reading \(index)".utf8), properties: level == 5 ? [] : nil))
    }
    connection.close()
    return connection
}
