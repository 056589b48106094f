#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A child process started with `posix_spawn`, with every signal unblocked and reset to its
/// default action, so that SIGTERM stops it even when the parent blocks or ignores signals
/// (as signal-handling runtimes do). It runs in its own process group, so a Ctrl-C in the
/// terminal reaches only the parent, which then stops the child in order. Its output goes to a
/// file or is inherited.
public final class ChildProcess: @unchecked Sendable {
    /// The child's process id.
    public let pid: pid_t
    private var exitStatus: Int32?

    /// Spawns `path` with `arguments`; output is appended to `outputPath`, or inherited when nil.
    /// The child starts in `workingDirectory` when given, without changing the parent's own
    /// directory, which other threads share: `/bin/sh` changes directory and replaces itself with
    /// `path` (keeping the process id), since `posix_spawn`'s own change of directory is a GNU
    /// extension Swift does not import.
    public convenience init(
        path: String, arguments: [String], outputPath: String?, environment: [String: String]? = nil,
        workingDirectory: String?
    ) throws(SpawnError) {
        guard let workingDirectory else {
            try self.init(path: path, arguments: arguments, outputPath: outputPath, environment: environment)
            return
        }
        try self.init(
            path: "/bin/sh", arguments: ["-c", #"cd "$0" && exec "$@""#, workingDirectory, path] + arguments,
            outputPath: outputPath, environment: environment)
    }

    /// Spawns `path` with `arguments` in the parent's working directory.
    public init(path: String, arguments: [String], outputPath: String?, environment: [String: String]? = nil)
        throws(SpawnError)
    {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(
            &attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP))

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let outputPath {
            posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_APPEND, 0o644)
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
        }

        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var child: pid_t = 0
        let envp: [UnsafeMutablePointer<CChar>?]? = environment.map {
            $0.map { strdup("\($0.key)=\($0.value)") } + [nil]
        }
        defer { envp?.forEach { free($0) } }
        let rc =
            envp.map { posix_spawn(&child, path, &actions, &attributes, argv, $0) }
            ?? posix_spawn(&child, path, &actions, &attributes, argv, environ)
        guard rc == 0 else { throw SpawnError(path: path, code: rc) }
        pid = child
    }

    /// A child still running when its owner lets go of it is killed, so none is ever orphaned.
    deinit {
        if isRunning {
            kill(pid, SIGKILL)
            waitUntilExit()
        }
    }

    /// True until the process has exited (and been reaped).
    public var isRunning: Bool {
        if exitStatus != nil { return false }
        var status: Int32 = 0
        let rc = waitpid(pid, &status, WNOHANG)
        if rc == pid {
            exitStatus = status
            return false
        }
        return rc == 0
    }

    /// The exit status once exited (-1 while running).
    public var terminationStatus: Int32 { exitStatus.map { ($0 >> 8) & 0xff } ?? -1 }

    /// Sends a signal.
    public func signal(_ signal: Int32) {
        if exitStatus == nil { kill(pid, signal) }
    }

    /// Blocks until the process exits.
    public func waitUntilExit() {
        guard exitStatus == nil else { return }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        exitStatus = status
    }
}

/// `posix_spawn` failed.
public struct SpawnError: Error, CustomStringConvertible {
    public var path: String
    public var code: Int32
    public var description: String { "cannot start \(path): \(String(cString: strerror(code)))" }
}
