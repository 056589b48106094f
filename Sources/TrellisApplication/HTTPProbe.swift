import Foundation

/// One HTTP/1.0 GET over a plain socket, with a deadline: enough for a probe, without linking an
/// HTTP client library into the binary.
package enum HTTPProbe {
    package struct Failure: Error {
        package var reason: String
    }

    package static func get(host: String, port: Int, path: String, timeout: Double) throws(Failure) -> (
        status: Int, body: [UInt8]
    ) {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &list) == 0, let first = list else {
            throw Failure(reason: "cannot resolve \(host)")
        }
        defer { freeaddrinfo(list) }
        let fd = socket(first.pointee.ai_family, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(reason: String(cString: strerror(errno))) }
        defer { close(fd) }
        var interval = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - timeout.rounded(.down)) * 1_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &interval, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &interval, socklen_t(MemoryLayout<timeval>.size))
        guard connect(fd, first.pointee.ai_addr, first.pointee.ai_addrlen) == 0 else {
            throw Failure(reason: String(cString: strerror(errno)))
        }
        let request = Array("GET \(path) HTTP/1.0\r\nHost: \(host):\(port)\r\nConnection: close\r\n\r\n".utf8)
        guard send(fd, request, request.count, Int32(MSG_NOSIGNAL)) == request.count else {
            throw Failure(reason: String(cString: strerror(errno)))
        }
        var response = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(fd, &chunk, chunk.count, 0)
            if count == 0 { break }
            guard count > 0 else {
                throw Failure(
                    reason: errno == EAGAIN ? "no answer within \(timeout) s" : String(cString: strerror(errno)))
            }
            response += chunk[0..<count]
            guard response.count < 1_000_000 else { break }
        }
        guard let headerEnd = response.firstRange(of: Array("\r\n\r\n".utf8)),
            let statusLine = String(bytes: response[..<headerEnd.lowerBound], encoding: .utf8)?.split(separator: "\r\n")
                .first,
            let status = statusLine.split(separator: " ").dropFirst().first.flatMap({ Int($0) })
        else {
            throw Failure(reason: "not an HTTP answer")
        }
        return (status, Array(response[headerEnd.upperBound...]))
    }
}

extension HTTPProbe {
    /// What `trellis health` says of the probe at `host:port`: healthy only on a 200, with one line
    /// (`alive`, `ready`, `unavailable: broker: …`, or why nothing answered).
    ///
    /// - Parameter ready: asks `/readyz` (can it serve) instead of `/livez` (is it alive).
    package static func ask(host: String, port: Int, ready: Bool, timeout: Double) -> (healthy: Bool, line: String) {
        let path = ready ? "/readyz" : "/livez"
        do {
            let (status, body) = try get(host: host, port: port, path: path, timeout: timeout)
            return (status == 200, line(status: status, body: body))
        } catch {
            return (false, "not answering at \(host):\(port)\(path): \(error.reason)")
        }
    }

    /// The probe's one line (``Probes/Answer/line``), rebuilt from its JSON; the status code and
    /// body when it is not JSON.
    package static func line(status: Int, body: [UInt8]) -> String {
        guard let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any],
            let state = object["status"] as? String
        else {
            return "HTTP \(status): \(String(decoding: body.prefix(200), as: UTF8.self))"
        }
        let checks = object["checks"] as? [String: [String: Any]] ?? [:]
        let failing = checks.filter { ($0.value["ok"] as? Bool) == false }.sorted { $0.key < $1.key }
        guard !failing.isEmpty else { return state }
        return state + ": "
            + failing.map { "\($0.key): \($0.value["error"] as? String ?? "failing")" }.joined(separator: "; ")
    }
}
