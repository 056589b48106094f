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
        let tables = ["/proc/\(pid)/net/tcp", "/proc/\(pid)/net/tcp6"].compactMap(TCPSocketTable.init(path:))
        guard let descriptors = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd"),
            !tables.isEmpty
        else { return nil }
        let listening = Set(tables.flatMap { $0.sockets(onPort: port).filter(\.listening).map(\.inode) })
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
}

/// One of the kernel's TCP socket tables (`/proc/net/tcp`, `/proc/<pid>/net/tcp6`), read whole.
public struct TCPSocketTable: Sendable {
    /// A socket of the table: whether it listens, the bytes received and not read yet, its inode.
    public struct Socket: Sendable {
        public let listening: Bool
        public let unreadBytes: Int
        public let inode: String
    }

    private let rows: [[Substring]]

    /// Reads the table at `path`; nil when it cannot be read. Read to the end: the kernel hands such a
    /// file out a page at a time, and its size says 0.
    public init?(path: String) {
        guard let handle = FileHandle(forReadingAtPath: path), let bytes = try? handle.readToEnd() else { return nil }
        try? handle.close()
        rows = String(decoding: bytes, as: UTF8.self).split(separator: "\n").dropFirst().map {
            $0.split(separator: " ")
        }
    }

    /// The sockets whose local port is `port` (the local address's port in hex, the state `0A` for
    /// LISTEN, the receive queue after the colon of the fifth column, the inode in the tenth).
    public func sockets(onPort port: Int) -> [Socket] {
        let hex = String(port, radix: 16, uppercase: true)
        let suffix = ":" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
        return rows.compactMap { fields in
            guard fields.count > 9, fields[1].hasSuffix(suffix) else { return nil }
            let unread = fields[4].split(separator: ":").last.flatMap { Int($0, radix: 16) } ?? 0
            return Socket(listening: fields[3] == "0A", unreadBytes: unread, inode: String(fields[9]))
        }
    }
}
