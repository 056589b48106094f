import Foundation
import Testing
import TrellisCore
import TrellisMQTTTypes
import TrellisTestSupport
import TrellisWire

/// Captures made by tcpdump around a real Mosquitto while mosquitto_pub publishes, imported.
@Suite("Wire import: live captures by tcpdump")
struct LiveCaptureTests {
    static let skip = "needs tcpdump and the right to capture (root or CAP_NET_RAW): make test installs tcpdump"
    static let skipNamespace =
        "needs tcpdump, ip and ethtool and the right to make a network namespace (root): make test installs them"

    @Test(
        "MQTT 3.1.1 and 5 publishes captured on lo, with v5 properties, and the deliveries to a subscriber",
        .enabled(if: CaptureAbility.canCapture, Comment(rawValue: skip)))
    func loopback() async throws {
        let directory = try Self.directory()
        let (file, port) = try await Self.loopbackCapture(in: directory)
        let result = Imported(Array(try Data(contentsOf: URL(fileURLWithPath: file))), ports: [port], chunk: 1000)
        #expect(result.problems.isEmpty, "\(result.problems)")
        #expect(result.topics == ["sensors/a", "sensors/b", "sensors/c"])
        #expect(result.inputs.map { $0.client ?? "" } == ["pub311", "pub5", "pub5bin"])
        #expect(result.inputs.map(\.qos) == [1, 2, 0])
        #expect(result.inputs[0].text == "hello 3.1.1")
        #expect(
            result.inputs[1].properties
                == MQTTProperties(
                    responseTopic: "app/replies", correlationData: Array("corr-1".utf8),
                    userProperties: [.init("source", "pi")], contentType: "text/plain"))
        #expect(result.inputs[2].payload == [0, 1, 2, 0xFF, 0])
        #expect(result.deliveries.map(\.topic) == ["sensors/a", "sensors/b", "sensors/c"])
        #expect(result.messages.filter { $0.direction == .toClient }.allSatisfy { $0.clientID == "watcher" })
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// tcpdump on lo around a test broker while a v5 subscriber listens and mosquitto_pub publishes
    /// in 3.1.1 (QoS 1) and 5 (QoS 2 with properties, and a binary payload): the file and the port.
    static func loopbackCapture(in directory: String) async throws -> (file: String, port: UInt16) {
        let file = directory + "/lo.pcap"
        let binary = directory + "/binary"
        try Data([0, 1, 2, 0xFF, 0]).write(to: URL(fileURLWithPath: binary))
        return try await withTestBroker { broker in
            let port = "\(broker.port)"
            let tcpdump = try ToolProcess([
                CaptureAbility.tcpdump!, "-i", "lo", "--immediate-mode", "-U", "-B", "65536", "-s", "0", "-w", file,
                "tcp port \(port)"
            ])
            try await tcpdump.waitFor("listening on lo")
            let watcher = try ToolProcess([
                "/usr/bin/stdbuf", "-oL", "/usr/bin/mosquitto_sub", "-h", "127.0.0.1", "-p", port, "-V", "5", "-i",
                "watcher",
                "-t", "sensors/#", "-q", "2", "-C", "3", "-d"
            ])
            try await watcher.waitFor("SUBACK")
            let pub = ["/usr/bin/mosquitto_pub", "-h", "127.0.0.1", "-p", port]
            _ = try await ToolProcess.run(
                pub + ["-V", "mqttv311", "-i", "pub311", "-t", "sensors/a", "-m", "hello 3.1.1", "-q", "1"])
            _ = try await ToolProcess.run(
                pub + [
                    "-V", "5", "-i", "pub5", "-t", "sensors/b", "-m", "hello 5", "-q", "2",
                    "-D", "publish", "response-topic", "app/replies", "-D", "publish", "correlation-data", "corr-1",
                    "-D", "publish", "user-property", "source", "pi", "-D", "publish", "content-type", "text/plain"
                ])
            _ = try await ToolProcess.run(pub + ["-V", "5", "-i", "pub5bin", "-t", "sensors/c", "-f", binary])
            try await watcher.waitForExit()
            // tcpdump may lag behind on a busy machine: stop it once the file holds the last delivery.
            try await Self.waitUntil(file, port: UInt16(broker.port), tcpdump: tcpdump) { $0.deliveries.count >= 3 }
            try await tcpdump.stop()
            return (file, UInt16(broker.port))
        }
    }

    @Test(
        "a capture on a loopback of MTU 576 in its own network namespace: payloads span segments",
        .enabled(if: CaptureAbility.canUseNamespaces, Comment(rawValue: skipNamespace)))
    func smallMTU() async throws {
        let directory = try Self.directory()
        let file = directory + "/mtu.pcap", payloadFile = directory + "/payload", config = directory + "/mosquitto.conf"
        let payload = (0..<5000).map { UInt8(UInt8(ascii: "a") + UInt8($0 % 26)) }
        try Data(payload).write(to: URL(fileURLWithPath: payloadFile))
        try
            "listener 1883 127.0.0.1\nallow_anonymous true\nuser root\npersistence false\nlog_dest stderr\nlog_type all\n"
            .write(toFile: config, atomically: true, encoding: .utf8)
        let ip = ToolProcess.find("ip")!
        let namespace = "trellis-wire-\(UUID().uuidString.prefix(8))"
        _ = try await ToolProcess.run([ip, "netns", "add", namespace])
        let inside = [ip, "netns", "exec", namespace]
        var tools: [ToolProcess] = []
        do {
            _ = try await ToolProcess.run(inside + [ip, "link", "set", "lo", "mtu", "576", "up"])
            // Without segmentation offload the kernel cuts segments at the MTU before tcpdump sees them.
            _ = try await ToolProcess.run(
                inside + [ToolProcess.find("ethtool")!, "-K", "lo", "tso", "off", "gso", "off"])
            let broker = try ToolProcess(inside + ["/usr/sbin/mosquitto", "-c", config])
            tools.append(broker)
            try await broker.waitFor("listen socket on port 1883")
            let tcpdump = try ToolProcess(
                inside + [
                    CaptureAbility.tcpdump!, "-i", "lo", "--immediate-mode", "-U", "-B", "65536", "-s", "0", "-w", file,
                    "tcp port 1883"
                ])
            tools.append(tcpdump)
            try await tcpdump.waitFor("listening on lo")
            // A first publish, waited for in the file, shows the capture is live before the ones checked.
            _ = try await ToolProcess.run(
                inside + ["/usr/bin/mosquitto_pub", "-h", "127.0.0.1", "-p", "1883", "-t", "probe", "-m", "x"])
            try await Self.waitUntil(file, port: 1883, tcpdump: tcpdump) { $0.topics.contains("probe") }
            for version in ["mqttv311", "5"] {
                _ = try await ToolProcess.run(
                    inside + [
                        "/usr/bin/mosquitto_pub", "-h", "127.0.0.1", "-p", "1883", "-V", version,
                        "-i", "big-\(version)", "-t", "photos/\(version)", "-f", payloadFile, "-q", "1"
                    ])
            }
            try await Self.waitUntil(file, port: 1883, tcpdump: tcpdump) { $0.inputs.count >= 3 }
            try await tcpdump.stop()
            try await broker.stop(SIGTERM)
        } catch {
            for tool in tools { try? await tool.stop(SIGKILL) }
            _ = try? await ToolProcess.run([ip, "netns", "del", namespace])
            throw error
        }
        _ = try? await ToolProcess.run([ip, "netns", "del", namespace])
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: file)))
        var reader = CaptureFileReader()
        reader.push(bytes)
        var largest = 0
        while let packet = try reader.next() { largest = max(largest, packet.data.count) }
        #expect(largest <= 576 + 14, "a frame of \(largest) bytes: the MTU was not lowered")
        let result = Imported(bytes)
        #expect(result.problems.isEmpty, "\(result.problems)")
        #expect(result.topics == ["probe", "photos/mqttv311", "photos/5"])
        #expect(result.inputs.dropFirst().allSatisfy { $0.payload == payload })
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Waits until the capture tcpdump is writing holds what `done` looks for.
    static func waitUntil(_ file: String, port: UInt16, tcpdump: ToolProcess, _ done: @escaping (Imported) -> Bool)
        async throws
    {
        // A 64 MB capture buffer (`-B 65536` above) keeps a busy machine from dropping packets; the
        // wait is long for the same reason. What the file held last is said if it still times out.
        var last = "nothing yet"
        do {
            try await eventually("tcpdump wrote the traffic to \(file)", timeout: .seconds(90)) {
                guard let data = FileManager.default.contents(atPath: file) else { return false }
                // Segments may reach the file out of order: wait until none is missing (a file cut mid-record is fine).
                let imported = Imported(Array(data), ports: [port])
                last = "\(data.count) bytes, topics \(imported.topics), problems \(imported.problems)"
                return imported.problems.allSatisfy { $0.connection == nil } && done(imported)
            }
        } catch {
            throw TimeoutError(message: "\(error); the file held \(last); tcpdump printed: \(tcpdump.text)")
        }
    }

    static func directory() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("trellis-wire-\(UUID().uuidString)")
            .path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }
}
