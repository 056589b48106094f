import Foundation

/// A tmpfs mounted on a fresh directory, for tests that fill a real file system. Needs root.
public struct Tmpfs: Sendable {
    public let path: String

    /// True when a tmpfs can be mounted here (root, mount(8) present and allowed).
    public static let usable: Bool = {
        guard getuid() == 0 else { return false }
        guard let probe = try? Tmpfs(megabytes: 1) else { return false }
        probe.remove()
        return true
    }()

    public init(megabytes: Int) throws {
        path = (NSTemporaryDirectory() as NSString).appendingPathComponent("trellis-tmpfs-\(UUID().uuidString)")
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        guard Self.mount(["-t", "tmpfs", "-o", "size=\(megabytes)m", "tmpfs", path]) else {
            try? FileManager.default.removeItem(atPath: path)
            throw CocoaError(.fileWriteUnknown)
        }
    }

    /// `mount -o remount,OPTIONS`.
    public func remount(_ options: String) throws {
        guard Self.mount(["-o", "remount,\(options)", path]) else { throw CocoaError(.fileWriteUnknown) }
    }

    public func remove() {
        _ = Self.run("/bin/umount", ["-l", path])
        try? FileManager.default.removeItem(atPath: path)
    }

    private static func mount(_ arguments: [String]) -> Bool {
        run("/bin/mount", arguments)
    }

    private static func run(_ tool: String, _ arguments: [String]) -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }
}
