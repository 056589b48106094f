import Foundation
import Testing
import TrellisBroker
import TrellisTestSupport

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `trellis run --console` as deployed: the console served beside the relay on a loopback port with
/// what the relay handled, and refused at start when bound beyond loopback with no operator's
/// account to check (a broker named by `--broker`).
@Suite("Console: trellis run --console")
struct ConsoleRunTests {
    @Test("on a loopback port the console answers with the relay's state, read-only, with its policy")
    func servedOnLoopback() async throws {
        try await withTestBroker { broker in
            let (trellis, ports) = try await TrellisBinary.startRelay(broker: broker, servers: ["--console"])
            let button = "console-\(UUID().uuidString.prefix(6))"
            let presser = try await TestClients.connect(to: broker)
            try await presser.publishAndWait(topic: "p2o/buttons/\(button)/press", payload: [])
            let base = "http://127.0.0.1:\(ports[0])"
            try await eventually("the press reaches /buttons", timeout: .seconds(20)) {
                let (status, body, _) = try await Self.request(base + "/buttons")
                return status == 200 && body.contains("<th scope=\"row\">\(button)</th><td>1</td>")
            }
            // The live view has the press the broker delivered, decoded, with its fan-out.
            let (liveStatus, live, _) = try await Self.request(base + "/live?service=buttons")
            #expect(liveStatus == 200 && live.contains("press of \(button), to 0 clients"), "\(live)")
            #expect(live.contains("p2o/buttons/\(button)/state"), "\(live)")
            let (status, body, headers) = try await Self.request(base + "/")
            #expect(status == 200 && body.contains("<h1>Overview</h1>"), "\(body)")
            #expect(body.contains(#"data-status="ready""#), "\(body)")
            #expect((headers["content-security-policy"] ?? "").contains("frame-ancestors 'none'"))
            #expect(try await Self.request(base + "/", method: "POST").status == 405)
            #expect(trellis.output.contains("serving the console"), "\(trellis.output)")
            #expect(try await trellis.terminate() == 0)
            await presser.shutdown()
        }
    }

    @Test("bound beyond loopback while joining a named broker, trellis run refuses to start and says why")
    func refusedBeyondLoopback() async throws {
        let state = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: state) }
        let refused = try await TrellisBinary.run(
            ["run", "--broker", "127.0.0.1:1", "--state", state, "--console", "0.0.0.0:9470"])
        #expect(refused.status != 0)
        #expect(
            refused.output.contains("console.address 0.0.0.0:9470 is reachable beyond this machine"),
            "\(refused.output)")
        #expect(refused.output.contains("operator's account"))
    }

    /// One request; its status, body and headers (by lower-case name).
    static func request(_ url: String, method: String = "GET") async throws -> (
        status: Int, body: String, headers: [String: String]
    ) {
        var request = URLRequest(url: URL(string: url)!)
        request.httpMethod = method
        let (data, response) = try await URLSession.shared.data(for: request)
        let http = response as! HTTPURLResponse
        var headers: [String: String] = [:]
        for (key, value) in http.allHeaderFields {
            if let key = key as? String, let value = value as? String { headers[key.lowercased()] = value }
        }
        return (http.statusCode, String(decoding: data, as: UTF8.self), headers)
    }
}
