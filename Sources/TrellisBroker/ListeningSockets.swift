import Foundation

/// Which process listens on a TCP port, read from Linux's `/proc`: a broker started on a port that
/// another process took a moment before (a test's port chosen free, then bound by a neighbour) exits
/// with "Address already in use", but until it has, a probe of the port finds the neighbour
/// accepting and would take the broker for started.
enum ListeningSockets {
    /// Whether process `pid` holds a socket listening on TCP `port` (IPv4 or IPv6): false for a process
    /// that is gone; nil wherever `/proc` cannot tell (not Linux; the process's descriptors or socket
    /// tables not readable here, as for a broker that became another user without this process being
    /// allowed to look at it), so that the caller decides as it would without it.
    static func process(_ pid: Int32, listensOn port: Int) -> Bool? {
        guard FileManager.default.fileExists(atPath: "/proc/self/fd") else { return nil }
        guard pid > 0 else { return false }
        if kill(pid, 0) != 0 && errno == ESRCH { return false }
        guard let descriptors = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd"),
            let listening = inodes(of: pid, listeningOn: port)
        else { return nil }
        for descriptor in descriptors {
            var buffer = [CChar](repeating: 0, count: 64)
            let length = readlink("/proc/\(pid)/fd/\(descriptor)", &buffer, buffer.count - 1)
            guard length >= 0 else {
                // Closed since the listing: not it. Not allowed to look: cannot tell.
                if errno == ENOENT { continue }
                return nil
            }
            let target = String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if target.hasPrefix("socket:["), listening.contains(String(target.dropFirst(8).dropLast())) {
                return true
            }
        }
        return false
    }

    /// The inodes of the sockets listening on TCP `port` in the network namespace of `pid`, from its
    /// `net/tcp` and `net/tcp6` (the local address's port in hex, the state `0A` for LISTEN, the inode in the
    /// tenth column); nil when neither table can be read.
    static func inodes(of pid: Int32, listeningOn port: Int) -> Set<String>? {
        let hex = String(port, radix: 16, uppercase: true)
        let suffix = ":" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
        var found: Set<String> = []
        var read = false
        for table in ["/proc/\(pid)/net/tcp", "/proc/\(pid)/net/tcp6"] {
            guard let text = try? String(contentsOfFile: table, encoding: .utf8) else { continue }
            read = true
            for line in text.split(separator: "\n").dropFirst() {
                let fields = line.split(separator: " ")
                guard fields.count > 9, fields[1].hasSuffix(suffix), fields[3] == "0A" else { continue }
                found.insert(String(fields[9]))
            }
        }
        return read ? found : nil
    }
}
