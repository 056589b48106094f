import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
import TrellisRelay
import TrellisTestSupport
@testable import TrellisServer

/// The console in Debian's headless Chromium: the console served on a loopback port over a relay's
/// real store filled by ``ConsoleFixture``; `Tests/Console/console_browser.py` loads each page at a
/// phone and a desktop width, compares what the DOM shows with what was stored, saves a screenshot
/// per page and width, and fails on any error in the browser's console (CSP violations included).
/// The screenshots stay in `TRELLIS_TEST_OUTPUT` (else a directory under the temporary one), whose
/// path the test prints.
@Suite("Console: the pages in a real browser", .serialized)
struct ConsoleBrowserTests {
    /// Chromium, ChromeDriver and Selenium, as the Socket.IO browser tests install them.
    static let setup: Task<Void, any Error> = Task {
        let script = Repository.root.appendingPathComponent("Tests/SocketIO/browser/setup.sh").path
        _ = try await ToolProcess.run(["/bin/sh", script], timeout: .seconds(900))
    }

    @Test("each page at 390x844 and 1280x800 shows the store's state, with no error in the browser's console")
    func pagesInChromium() async throws {
        try await Self.setup.value
        let output =
            ProcessInfo.processInfo.environment["TRELLIS_TEST_OUTPUT"].map {
                URL(fileURLWithPath: $0).appendingPathComponent("console")
            } ?? FileManager.default.temporaryDirectory.appendingPathComponent("trellis-console-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: output, withIntermediateDirectories: true)
        let expect: [String: Any] = [
            "status": "unavailable", "dead_letters": 1,
            "plants": [ConsoleFixture.plant, ConsoleFixture.hostilePlant],
            "alerts": [ConsoleFixture.plantAlerts, "not linked to a species"],
            "plant_path": "/plants/" + HTML.pathSegment(ConsoleFixture.plant),
            "buttons": [ConsoleFixture.button: "\(ConsoleFixture.presses)"],
            "devices": [ConsoleFixture.onlineDevice: "online", ConsoleFixture.offlineDevice: "offline"],
            "device_path": "/devices/" + HTML.pathSegment(ConsoleFixture.onlineDevice),
            "log_line": ConsoleFixture.logLine, "dead_letter_reason": ConsoleFixture.deadLetterReason,
            "dead_letter_payload": ConsoleFixture.deadLetterPayload, "live_summary": ConsoleFixture.liveSummary
        ]
        let expectPath = output.appendingPathComponent("expect.json")
        try JSONSerialization.data(withJSONObject: expect).write(to: expectPath)

        try await withUnconnectedService(.directory) { relay in
            try await ConsoleFixture.fill(relay.engine.store)
            try await ConsoleFixture.handle(relay, ConsoleFixture.liveRequest, on: "rpi/torpi/ann")
            try await ConsoleRoutesTests.routes(relay).test(.live) { client in
                let port = try #require(client.port)
                let script = Repository.root.appendingPathComponent("Tests/Console/console_browser.py").path
                let page = try ToolProcess([
                    "/usr/bin/python3", script, "--url", "http://localhost:\(port)", "--expect", expectPath.path,
                    "--out", output.path
                ])
                let status = try await page.waitForExit(timeout: .seconds(300))
                print("console screenshots in \(output.path)")
                #expect(status == 0, "\(page.text)")
                let shots = page.text.split(separator: "\n").filter { $0.contains(#""event": "screenshot""#) }
                #expect(shots.count == 16, "\(page.text)")
                for width in ["phone", "desktop"] {
                    for name in ["overview", "plants", "plant", "buttons", "devices", "device", "dead-letters", "live"]
                    {
                        let path = output.appendingPathComponent("console-\(name)-\(width).png").path
                        #expect(FileManager.default.fileExists(atPath: path), "\(path)")
                    }
                }
            }
        }
    }
}
