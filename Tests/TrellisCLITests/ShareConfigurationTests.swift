import Foundation
import Testing
import TrellisApplication
import TrellisTestSupport

@testable import trellis

/// The settings of a share group and a PostgreSQL store, refused with a reason before anything starts.
@Suite("Share group and store settings")
struct ShareConfigurationTests {
    @Test(
        "--share needs a shared --store and its own --client-id",
        arguments: [
            (["--share", "g"], "broker.share_group needs state.store"),
            (["--share", "g", "--store", "postgres://u@127.0.0.1:1/db"], "needs broker.client_id"),
            (
                ["--share", "a/b", "--store", "postgres://u@127.0.0.1:1/db", "--client-id", "r1"],
                "a name without /, + or #"
            ),
            (["--store", "mysql://u@127.0.0.1/db"], "empty or postgres://")
        ])
    func refused(_ arguments: [String], _ reason: String) async throws {
        // What `trellis run` reads of its flags, then checks before it takes the state (`launch`).
        let run = try RunCommand.parse(["--broker", "127.0.0.1:1", "--state", temporaryDirectory()] + arguments)
        do {
            let configuration = try await TLSCommandTests.load(run.flagValues)
            #expect(
                configuration.shareGroupProblem?.contains(reason) == true, "\(configuration.shareGroupProblem ?? "")")
        } catch {
            #expect("\(error)".contains(reason), "\(error)")
        }
    }

    @Test("config check shows the store URL with its password hidden")
    func passwordHidden() async throws {
        let directory = temporaryDirectory()
        let file = directory + "/trellis.yaml"
        try "state:\n  store: postgres://trellis:hunter2@127.0.0.1:5432/trellis\n".write(
            toFile: file, atomically: true, encoding: .utf8)
        let report = try await TLSCommandTests.load([:], file: file).report.joined(separator: "\n")
        #expect(report.contains("postgres://trellis:***@127.0.0.1:5432/trellis"), "\(report)")
        #expect(!report.contains("hunter2"))
    }
}
