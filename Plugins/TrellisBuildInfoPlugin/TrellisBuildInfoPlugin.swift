import Foundation
import PackagePlugin

/// Writes `GitCommit.swift` into the `TrellisBuildInfo` module: the commit of the git checkout being
/// built (`git rev-parse --short=12 HEAD`), or "unknown" outside a git checkout.
///
/// The command is an ordinary build command, so SwiftPM runs it only when one of its inputs changed. Its
/// inputs are the checkout's HEAD, HEAD's reflog (appended to by every commit, checkout, reset and pull)
/// and the branch's ref file, all looked up when the build is planned; the command itself asks git again,
/// and rewrites the file only when the commit differs, so a build at the same commit compiles nothing
/// and a new commit recompiles only this small module (and the file of TrellisCore that reads it) and relinks.
@main
struct TrellisBuildInfoPlugin: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let root = context.package.directoryURL
        let output = context.pluginWorkDirectoryURL.appending(path: "GitCommit.swift")
        var inputs: [URL] = []
        if let gitDirectory = Self.git(["rev-parse", "--absolute-git-dir"], in: root) {
            let directory = URL(filePath: gitDirectory)
            let common = Self.git(["rev-parse", "--path-format=absolute", "--git-common-dir"], in: root).map {
                URL(filePath: $0)
            }
            var candidates = [directory.appending(path: "HEAD"), directory.appending(path: "logs/HEAD")]
            if let common, let ref = Self.git(["symbolic-ref", "-q", "HEAD"], in: root) {
                candidates.append(common.appending(path: ref))
            }
            inputs = candidates.filter { FileManager.default.fileExists(atPath: $0.path) }
        }
        let script = #"""
            set -eu
            commit=$(git -C "$1" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
            text="/// Written by the TrellisBuildInfo plugin at build time: the commit being built.
            let gitCommit = \"$commit\""
            if [ ! -f "$2" ] || [ "$(cat "$2")" != "$text" ]; then printf '%s\n' "$text" > "$2"; fi
            """#
        return [
            .buildCommand(
                displayName: "Reading the git commit",
                executable: URL(filePath: "/bin/sh"),
                arguments: ["-c", script, "sh", root.path, output.path],
                inputFiles: inputs,
                outputFiles: [output]
            )
        ]
    }

    /// `git -C directory arguments`'s output, trimmed; nil when git is missing or fails.
    static func git(_ arguments: [String], in directory: URL) -> String? {
        let process = Process()
        process.executableURL = URL(filePath: "/usr/bin/env")
        process.arguments = ["git", "-C", directory.path] + arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { return nil }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { return nil }
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return text.isEmpty ? nil : text
    }
}
