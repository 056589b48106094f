import Foundation
import TrellisBroker
import TrellisRelay
import TrellisTestSupport

/// Runs `body` with a relay on a broker set up as the shipped broker.conf sets it up: clients
/// without an account let in, a password file, and the ACL `AccessControlList` writes from the
/// topic table. The relay logs in as `trellis`; `ops` (password `pw-ops`) is an operator.
func withLANProfileRelay(settings: RelaySettings = RelaySettings(), _ body: (RelayHarness) async throws -> Void)
    async throws
{
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("lan-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let passwd = directory + "/passwd"
    try "trellis:pw-trellis\nops:pw-ops\n".write(toFile: passwd, atomically: true, encoding: .utf8)
    let hasher = Process()
    hasher.executableURL = URL(fileURLWithPath: "/usr/bin/mosquitto_passwd")
    hasher.arguments = ["-U", passwd]
    try hasher.run()
    hasher.waitUntilExit()
    guard hasher.terminationStatus == 0 else { throw TimeoutError(message: "mosquitto_passwd -U failed") }
    var acl = AccessControlList()
    acl.set("trellis", role: .trellis)
    acl.set("ops", role: .operator)
    try acl.render().write(toFile: directory + "/acl", atomically: true, encoding: .utf8)

    try await withTestBroker(anonymous: true, extraConfig: ["password_file \(passwd)", "acl_file \(directory)/acl"]) {
        broker in
        try await withRelayLoggedIn(broker: broker, settings: settings, watcher: "ops", body)
    }
}
