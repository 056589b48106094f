#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Small socket checks used before and after starting a broker.
public enum PortProbe {
    /// True when something accepts TCP connections on `host:port` (IPv4 or IPv6 literal).
    public static func isAccepting(host: String, port: Int) -> Bool {
        withSocketAddress(host: host, port: port) { address, length, family in
            let fd = socket(family, Int32(SOCK_STREAM.rawValue), 0)
            guard fd >= 0 else { return false }
            defer { close(fd) }
            return connect(fd, address, length) == 0
        } ?? false
    }

    /// True when `host` is an IPv4 or IPv6 address (or `localhost`), which ``isAccepting(host:port:)``
    /// can probe; a host name is not looked up.
    public static func isAddress(_ host: String) -> Bool {
        withSocketAddress(host: host, port: 0) { _, _, _ in true } ?? false
    }

    /// Asks the kernel for a free loopback port by binding port 0.
    public static func freeLoopbackPort() -> Int? {
        withSocketAddress(host: "127.0.0.1", port: 0) { address, length, family in
            let fd = socket(family, Int32(SOCK_STREAM.rawValue), 0)
            guard fd >= 0 else { return nil }
            defer { close(fd) }
            guard bind(fd, address, length) == 0 else { return nil }
            var bound = sockaddr_in()
            var size = socklen_t(MemoryLayout<sockaddr_in>.size)
            let ok = withUnsafeMutablePointer(to: &bound) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &size) }
            }
            guard ok == 0 else { return nil }
            return Int(UInt16(bigEndian: bound.sin_port))
        } ?? nil
    }

    private static func withSocketAddress<T>(
        host: String, port: Int,
        _ body: (UnsafePointer<sockaddr>, socklen_t, Int32) -> T
    ) -> T? {
        var v4 = sockaddr_in()
        v4.sin_family = sa_family_t(AF_INET)
        v4.sin_port = in_port_t(UInt16(port).bigEndian)
        let name = host == "localhost" ? "127.0.0.1" : host
        if inet_pton(AF_INET, name, &v4.sin_addr) == 1 {
            return withUnsafePointer(to: &v4) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    body($0, socklen_t(MemoryLayout<sockaddr_in>.size), AF_INET)
                }
            }
        }
        var v6 = sockaddr_in6()
        v6.sin6_family = sa_family_t(AF_INET6)
        v6.sin6_port = in_port_t(UInt16(port).bigEndian)
        if inet_pton(AF_INET6, name, &v6.sin6_addr) == 1 {
            return withUnsafePointer(to: &v6) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    body($0, socklen_t(MemoryLayout<sockaddr_in6>.size), AF_INET6)
                }
            }
        }
        return nil
    }
}
