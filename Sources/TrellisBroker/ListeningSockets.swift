import Foundation

/// Which process listens on a TCP port, read from Linux's `/proc`: a broker started on a port that
/// another process took a moment before (a test's port chosen free, then bound by a neighbour) exits
/// with "Address already in use", but until it has, a probe of the port finds the neighbour
/// accepting and would take the broker for started.
enum ListeningSockets {
    /// Whether process `pid` holds a socket listening on TCP `port` (IPv4 or IPv6): false for a process
    /// that is gone; nil where `/proc` cannot tell (not Linux, or its descriptors not readable here).
    static func process(_ pid: Int32, listensOn port: Int) -> Bool? {
        guard FileManager.default.fileExists(atPath: "/proc/self/fd") else { return nil }
        guard FileManager.default.fileExists(atPath: "/proc/\(pid)") else { return false }
        guard let descriptors = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd") else {
            return nil
        }
        let listening = inodes(listeningOn: port)
        return descriptors.contains { descriptor in
            let link = "/proc/\(pid)/fd/\(descriptor)"
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: link),
                target.hasPrefix("socket:[")
            else { return false }
            return listening.contains(String(target.dropFirst("socket:[".count).dropLast()))
        }
    }

    /// The inodes of the sockets listening on TCP `port`, from `/proc/net/tcp` and `/proc/net/tcp6`
    /// (the local address's port in hex, the state `0A` for LISTEN, the inode in the tenth column).
    static func inodes(listeningOn port: Int) -> Set<String> {
        let suffix = ":" + String(format: "%04X", port)
        var found: Set<String> = []
        for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
            guard let text = try? String(contentsOfFile: table, encoding: .utf8) else { continue }
            for line in text.split(separator: "\n").dropFirst() {
                let fields = line.split(separator: " ")
                guard fields.count > 9, fields[1].hasSuffix(suffix), fields[3] == "0A" else { continue }
                found.insert(String(fields[9]))
            }
        }
        return found
    }
}
