import Foundation
import PackagePlugin

/// Writes `BuildCommit.swift` before every build of the target that uses it: the git commit of the
/// package's checkout (12 hex digits, `-dirty` when tracked files differ from it), or `unknown`
/// when the package is not a git checkout of its own (a source archive, a copy without `.git`) or
/// git is missing or refuses the directory. `trellis_build_info{commit}` reports it.
///
/// The file is rewritten only when its text changes, so an unchanged commit costs no recompilation.
@main
struct BuildCommit: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let output = context.pluginWorkDirectoryURL.appendingPathComponent("Generated")
        return [.prebuildCommand(displayName: "Reading the git commit of the checkout",
                                 executable: URL(fileURLWithPath: "/bin/sh"),
                                 arguments: ["-c", Self.script, "build-commit", context.package.directoryURL.path, output.path],
                                 outputFilesDirectory: output)]
    }

    /// `sh -c SCRIPT NAME PACKAGE_DIR OUTPUT_DIR`. The commit counts only when the package directory
    /// is the top of its git work tree, so a source copy inside another repository is not given that
    /// repository's commit. `--no-optional-locks` keeps `git status` from taking the index lock that a
    /// git command run at the same time may need.
    static let script = #"""
        set -u
        dir=$(cd "$1" && pwd -P) || exit 1
        out=$2
        mkdir -p "$out" || exit 1
        commit=unknown
        top=$(git -C "$dir" rev-parse --show-toplevel 2>/dev/null) && top=$(cd "$top" && pwd -P) || top=
        if [ "$top" = "$dir" ] && short=$(git -C "$dir" rev-parse --short=12 HEAD 2>/dev/null); then
            commit=$short
            if [ -n "$(git --no-optional-locks -C "$dir" status --porcelain --untracked-files=no 2>/dev/null)" ]; then
                commit="$commit-dirty"
            fi
        fi
        text="/// The git commit this binary was built from, written at build time by the BuildCommit plugin.
        enum BuildCommit {
            static let current = \"$commit\"
        }"
        file="$out/BuildCommit.swift"
        if [ ! -f "$file" ] || [ "$(cat "$file")" != "$text" ]; then
            printf '%s\n' "$text" > "$file"
        fi
        """#
}
