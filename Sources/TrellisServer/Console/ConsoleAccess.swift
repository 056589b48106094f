import Foundation
import HTTPTypes
import Hummingbird

/// Who may read the console, and how every answer is sent. In order:
///
/// - a request carrying an `Origin` other than the console's own (`http://` and the `Host` it was
///   asked by) is refused with 403: no other site's page may read or drive it;
/// - any method but GET is answered 405: the console only reads;
/// - when a login is required (the console bound beyond loopback), a request without the
///   operator's account in HTTP Basic, or with a wrong password, is answered 401 with the challenge,
///   and an address that keeps guessing is answered 429 for a while (``ConsoleLoginThrottle``).
///
/// Every answer, refusals included, carries a strict Content-Security-Policy (no script at all,
/// styles from the console's stylesheet only, no framing), `nosniff`, no referrer, and `no-store`.
struct ConsoleAccess: RouterMiddleware {
    typealias Context = ConsoleRequestContext
    /// Checks a user name and password; nil when the console is open (loopback).
    let login: ConsoleLogin?
    let throttle = ConsoleLoginThrottle()

    static var headers: HTTPFields {
        [
            .contentSecurityPolicy:
                "default-src 'none'; style-src 'self'; img-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
            .xContentTypeOptions: "nosniff", .referrerPolicy: "no-referrer", .xFrameOptions: "DENY",
            .cacheControl: "no-store", .crossOriginOpenerPolicy: "same-origin",
            .crossOriginResourcePolicy: "same-origin"
        ]
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        var response = try await decide(request, context: context, next: next)
        for field in Self.headers { response.headers[field.name] = field.value }
        return response
    }

    private func decide(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        if let origin = request.headers[.origin], origin != "http://" + (request.head.authority ?? "") {
            return Self.text(
                .forbidden, "Forbidden: the console answers its own pages only, not \(origin.prefix(200))\n")
        }
        guard request.method == .get else {
            var refused = Self.text(.methodNotAllowed, "Method Not Allowed: the console is read-only (GET)\n")
            refused.headers[.allow] = "GET"
            return refused
        }
        if let login {
            if let wait = throttle.begin(context.address) {
                var slow = Self.text(.tooManyRequests, "Too Many Requests: too many wrong logins; wait \(wait) s\n")
                slow.headers[.retryAfter] = "\(wait)"
                return slow
            }
            let credentials = Self.basicCredentials(request.headers[.authorization])
            let right: Bool
            if let credentials {
                right = await login.verify(credentials.user, credentials.password)
            } else {
                right = false
            }
            throttle.checked(context.address, wrong: credentials != nil && !right)
            guard right else {
                var challenge = Self.text(.unauthorized, "Unauthorized: log in with the operator's account\n")
                challenge.headers[.wwwAuthenticate] = #"Basic realm="Trellis console", charset="UTF-8""#
                return challenge
            }
        }
        return try await next(request, context)
    }

    /// The user and password of an `Authorization: Basic …` header; nil for another scheme or a malformed one.
    static func basicCredentials(_ header: String?) -> (user: String, password: String)? {
        guard let header, header.count < 4096 else { return nil }
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "basic",
            let data = Data(base64Encoded: String(parts[1]).trimmingCharacters(in: .whitespaces)),
            let text = String(data: data, encoding: .utf8), let colon = text.firstIndex(of: ":")
        else { return nil }
        return (String(text[..<colon]), String(text[text.index(after: colon)...]))
    }

    static func text(_ status: HTTPResponse.Status, _ body: String) -> Response {
        Response(
            status: status, headers: [.contentType: "text/plain; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(string: body)))
    }
}

/// Checks the operator's account for the console: true when `user` and `password` are the
/// operator's. Asked once per request.
public struct ConsoleLogin: Sendable {
    let check: @Sendable (String, String) async -> Bool

    public init(_ check: @escaping @Sendable (_ user: String, _ password: String) async -> Bool) {
        self.check = check
    }

    public func verify(_ user: String, _ password: String) async -> Bool { await check(user, password) }
}

extension HTTPField.Name {
    static let referrerPolicy = HTTPField.Name("Referrer-Policy")!
    static let xFrameOptions = HTTPField.Name("X-Frame-Options")!
    static let crossOriginOpenerPolicy = HTTPField.Name("Cross-Origin-Opener-Policy")!
}
