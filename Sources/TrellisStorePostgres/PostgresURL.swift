import Foundation
import TrellisCore
import TrellisStore

/// Where a PostgreSQL store lives: `postgres://user[:password]@host[:port]/database[?sslmode=MODE]`.
///
/// The password is kept for connecting and never printed: ``description`` shows `***` in its place,
/// so the URL can go into logs and error messages as it is.
public struct PostgresURL: Sendable, Equatable, CustomStringConvertible {
    /// How the connection uses TLS, with libpq's names.
    public enum SSLMode: String, Sendable, CaseIterable {
        /// Plain TCP only.
        case disable
        /// TLS when the server offers it, without checking its certificate; plain TCP otherwise.
        case prefer
        /// TLS or no connection; the certificate is not checked (libpq's `require`).
        case require
        /// TLS or no connection, with the certificate checked against the system's CAs and the host name.
        case verifyFull = "verify-full"
    }

    public var user: String
    public var password: String?
    public var host: String
    public var port: Int
    public var database: String
    public var sslMode: SSLMode

    /// Reads a URL, or throws an error naming what is wrong (the password never appears in it).
    public init(_ text: String) throws {
        guard let components = URLComponents(string: text), let scheme = components.scheme,
            scheme == "postgres" || scheme == "postgresql"
        else {
            throw StoreError(
                code: .cannotOpen,
                message: "the store URL must look like postgres://user[:password]@host[:port]/database")
        }
        guard let host = components.host, !host.isEmpty else {
            throw StoreError(
                code: .cannotOpen, message: "the store URL names no host (postgres://user@HOST:port/database)")
        }
        guard let user = components.percentEncodedUser.flatMap({ $0.removingPercentEncoding }), !user.isEmpty else {
            throw StoreError(
                code: .cannotOpen, message: "the store URL names no user (postgres://USER@host:port/database)")
        }
        let database = String(components.path.drop(while: { $0 == "/" }))
        guard !database.isEmpty, !database.contains("/") else {
            throw StoreError(
                code: .cannotOpen, message: "the store URL names no database (postgres://user@host:port/DATABASE)")
        }
        var mode = SSLMode.prefer
        for item in components.queryItems ?? [] {
            guard item.name == "sslmode" else {
                throw StoreError(
                    code: .cannotOpen,
                    message: "the store URL has an unknown option \(item.name) (only sslmode is understood)")
            }
            guard let value = item.value, let parsed = SSLMode(rawValue: value) else {
                let known = SSLMode.allCases.map(\.rawValue).joined(separator: ", ")
                throw StoreError(code: .cannotOpen, message: "sslmode must be one of \(known)")
            }
            mode = parsed
        }
        self.user = user
        self.password = components.percentEncodedPassword.flatMap { $0.removingPercentEncoding }
        self.host = host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host
        self.port = components.port ?? 5432
        self.database = database.removingPercentEncoding ?? database
        self.sslMode = mode
        if let refusal = Self.transportRefusal(host: self.host, mode: mode) {
            throw StoreError(code: .cannotOpen, message: refusal)
        }
    }

    /// Why a connection to `host` with `mode` is refused, or nil when it may go ahead. Off this machine
    /// only `verify-full` (TLS, the server's certificate checked) or an explicit `disable` (plain text,
    /// chosen knowingly) are accepted: `prefer`, the default, falls back to plain text without a word, and
    /// `prefer` and `require` take any server's certificate, so the password and the state could go in
    /// the clear or to whoever answers. A loopback host never leaves the machine and keeps every mode.
    public static func transportRefusal(host: String, mode: SSLMode) -> String? {
        guard !isLocal(host), mode != .verifyFull, mode != .disable else { return nil }
        let given = mode == .prefer ? "without sslmode (libpq's prefer)" : "with sslmode=\(mode.rawValue)"
        return "the store URL names \(host), off this machine, \(given), which would not verify the server and may "
            + "send the password and the state in plain text: add ?sslmode=verify-full (TLS, the certificate "
            + "checked against the system's CAs and the host name), or ?sslmode=disable to accept plain text knowingly"
    }

    /// True for a host that is this machine: `localhost`, 127.0.0.0/8, `::1`, or a Unix socket's directory.
    public static func isLocal(_ host: String) -> Bool {
        let name = host.lowercased()
        if name == "localhost" || name.hasSuffix(".localhost") || name.hasPrefix("/") { return true }
        if name == "::1" || name == "0:0:0:0:0:0:0:1" { return true }
        let octets = name.split(separator: ".", omittingEmptySubsequences: false)
        return octets.count == 4 && octets[0] == "127" && octets.allSatisfy { UInt8($0) != nil }
    }

    /// True for the URLs this type reads, so a caller can tell a store URL from a directory.
    public static func isPostgres(_ text: String) -> Bool {
        text.hasPrefix("postgres://") || text.hasPrefix("postgresql://")
    }

    /// The URL with `***` for the password.
    public var description: String {
        let secret = password == nil ? "" : ":***"
        let shownHost = host.contains(":") ? "[\(host)]" : host
        let mode = sslMode == .prefer ? "" : "?sslmode=\(sslMode.rawValue)"
        return "postgres://\(user)\(secret)@\(shownHost):\(port)/\(database)\(mode)"
    }
}
