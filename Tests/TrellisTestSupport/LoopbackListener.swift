#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A TCP socket on 127.0.0.1, on a port the kernel picks, for tests that play the broker's side
/// of a connection themselves, or that need a port taken where nothing accepts. The caller closes
/// `fd`.
public struct LoopbackListener: Sendable {
    /// The socket could not be bound or set listening; says why.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    public let fd: Int32
    public let port: Int

    /// Binds and listens, with room for `backlog` connections nobody has accepted yet; with no
    /// backlog, only binds: the port is taken, but a connection to it is refused.
    public init(backlog: Int32?) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var size = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, size) == 0 && getsockname(fd, $0, &size) == 0
            }
        }
        guard fd >= 0, bound, backlog.map({ listen(fd, $0) == 0 }) ?? true else {
            let reason = String(cString: strerror(errno))
            if fd >= 0 { close(fd) }
            throw Failure(description: "cannot bind a loopback socket: \(reason)")
        }
        self.fd = fd
        self.port = Int(UInt16(bigEndian: address.sin_port))
    }
}
