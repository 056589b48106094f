import Foundation
import Testing
import TrellisBroker
import TrellisTestSupport

@Suite("The systemd unit")
struct SystemdUnitTests {
    static let analyzer = ["/usr/bin/systemd-analyze", "/bin/systemd-analyze"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    /// A shipped unit, the file name it is verified under, and lines it must hold.
    static let units: [(file: String, verifiedAs: String, lines: [String])] = [
        (
            "trellis.service", "trellis.service",
            ["After=network.target mosquitto.service", "Restart=on-failure"] + bounds
        ),
        (
            "trellis@.service", "trellis@1.service",
            [
                "--client-id trellis-%i", "EnvironmentFile=/etc/trellis/trellis.env", "TRELLIS_BROKER_SHARE_GROUP=",
                "Restart=on-failure"
            ]
                + bounds
        )
    ]

    /// The limits every unit sets: memory, tasks, descriptors (above the HTTP servers' connection caps), and
    /// other users' processes hidden.
    static let bounds = ["\nMemoryMax=512M\n", "\nTasksMax=256\n", "\nLimitNOFILE=4096\n", "\nProtectProc=invisible\n"]

    @Test(
        "systemd-analyze verify accepts the shipped units (trellis@ as its instance trellis@1)",
        .enabled(if: analyzer != nil, "systemd-analyze is not installed here, so the unit is not verified"),
        arguments: units.indices)
    func verify(_ index: Int) async throws {
        let (file, verifiedAs, lines) = Self.units[index]
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let unit = try String(contentsOf: root.appendingPathComponent("deploy/" + file), encoding: .utf8)
        for line in lines { #expect(unit.contains(line), "\(file) lacks \(line)") }
        // The unit names the installed binary; point it at the one just built.
        let directory = temporaryDirectory()
        let path = directory + "/" + verifiedAs
        try unit.replacingOccurrences(of: "/usr/local/bin/trellis", with: TrellisBinary.path)
            .write(toFile: path, atomically: true, encoding: .utf8)
        let output = directory + "/verify.log"
        let child = try ChildProcess(path: try #require(Self.analyzer), arguments: ["verify", path], outputPath: output)
        child.waitUntilExit()
        let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        #expect(child.terminationStatus == 0, "systemd-analyze verify \(file): \(text)")
        #expect(text.isEmpty, "systemd-analyze verify \(file) warned: \(text)")
    }
}
