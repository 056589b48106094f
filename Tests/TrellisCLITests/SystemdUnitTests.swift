import Foundation
import Testing
import TrellisBroker
import TrellisTestSupport

@Suite("The systemd unit")
struct SystemdUnitTests {
    static let analyzer = ["/usr/bin/systemd-analyze", "/bin/systemd-analyze"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    @Test("systemd-analyze verify accepts deploy/trellis.service",
          .enabled(if: analyzer != nil, "systemd-analyze is not installed here, so the unit is not verified"))
    func verify() async throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let unit = try String(contentsOf: root.appendingPathComponent("deploy/trellis.service"), encoding: .utf8)
        #expect(unit.contains("After=network.target mosquitto.service"))
        #expect(unit.contains("Restart=on-failure"))
        // The unit names the installed binary; point it at the one just built.
        let directory = temporaryDirectory()
        let path = directory + "/trellis.service"
        try unit.replacingOccurrences(of: "/usr/local/bin/trellis", with: TrellisBinary.path)
            .write(toFile: path, atomically: true, encoding: .utf8)
        let output = directory + "/verify.log"
        let child = try ChildProcess(path: try #require(Self.analyzer), arguments: ["verify", path], outputPath: output)
        child.waitUntilExit()
        let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        #expect(child.terminationStatus == 0, "systemd-analyze verify: \(text)")
        #expect(text.isEmpty, "systemd-analyze verify warned: \(text)")
    }

    @Test("systemd-analyze verify accepts an instance of deploy/trellis@.service, the template for several relays",
          .enabled(if: analyzer != nil, "systemd-analyze is not installed here, so the unit is not verified"))
    func verifyTemplate() async throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let unit = try String(contentsOf: root.appendingPathComponent("deploy/trellis@.service"), encoding: .utf8)
        #expect(unit.contains("--client-id trellis-%i"))
        #expect(unit.contains("EnvironmentFile=/etc/trellis/trellis.env"))
        #expect(unit.contains("TRELLIS_BROKER_SHARE_GROUP="))
        let directory = temporaryDirectory()
        let path = directory + "/trellis@1.service"
        try unit.replacingOccurrences(of: "/usr/local/bin/trellis", with: TrellisBinary.path)
            .write(toFile: path, atomically: true, encoding: .utf8)
        let output = directory + "/verify.log"
        let child = try ChildProcess(path: try #require(Self.analyzer), arguments: ["verify", path], outputPath: output)
        child.waitUntilExit()
        let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        #expect(child.terminationStatus == 0, "systemd-analyze verify: \(text)")
        #expect(text.isEmpty, "systemd-analyze verify warned: \(text)")
    }
}
