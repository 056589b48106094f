import AsyncHTTPClient
import Crypto
import Foundation
import NIOCore
import NIOHTTP1
import TrellisCore
import TrellisStore

/// What became of one attempt to send a notification.
package enum NotificationDelivery: Sendable, Equatable {
    case sent
    /// The reason, for the log and `trellis notify test`; never a secret.
    case failed(String)
}

/// Sends a notification through one channel.
package protocol NotificationSending: Sendable {
    func send(_ notification: OutboxNotification) async -> NotificationDelivery
}

/// The senders of a plan's channels, their secrets read from their files once, at start.
package enum NotificationSenders {
    /// How long one request may take, connection included: a server that hangs costs this much.
    package static let timeout: TimeAmount = .seconds(10)

    /// A sender for each channel of `plan`, or the reason one cannot be made (a secret file that
    /// is missing or readable by every user, an email channel without a login of two lines, a CA
    /// file that is not one).
    package static func make(_ plan: NotificationPlan, http: HTTPClient) throws(CommandFailure)
        -> [String: any NotificationSending]
    {
        var senders: [String: any NotificationSending] = [:]
        for channel in plan.channels {
            let secret = try channel.secretFile.map { path throws(CommandFailure) in
                try SecretFile.read(path, for: "notifications.channels.\(channel.name)")
            }
            switch channel.kind {
            case let .webhook(url):
                senders[channel.name] = WebhookSender(
                    channel: channel.name, url: url, secret: Array((secret ?? "").utf8), http: http)
            case let .ntfy(url):
                senders[channel.name] = NtfySender(url: url, token: secret, http: http)
            case let .email(to, host, port, from, implicitTLS, caFile):
                senders[channel.name] = try EmailSender(
                    channel: channel.name, to: to, host: host, port: port, from: from, implicitTLS: implicitTLS,
                    caFile: caFile, login: secret)
            }
        }
        return senders
    }
}

/// Reads a channel's secret: the file's text without its final line break. A file readable by
/// every user is refused, as the configuration check refuses it.
package enum SecretFile {
    package static func read(_ path: String, for place: String) throws(CommandFailure) -> String {
        if let problem = NotificationConfiguration.secretFileProblems(path, at: place).first {
            throw CommandFailure(problem)
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CommandFailure("\(place): cannot read \(path)")
        }
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .newlines)
    }
}

/// Sends an HTTP POST with `headers` and `body` to `url`, bounded by ``NotificationSenders/timeout``;
/// a 2xx answer is sent, anything else failed with its status.
func post(
    _ url: String, headers: [(String, String)], body: [UInt8], http: HTTPClient,
    timeout: TimeAmount = NotificationSenders.timeout
) async -> NotificationDelivery {
    var request = HTTPClientRequest(url: url)
    request.method = .POST
    for (name, value) in headers { request.headers.add(name: name, value: value) }
    request.headers.replaceOrAdd(name: "Content-Length", value: "\(body.count)")
    request.body = .bytes(ByteBuffer(bytes: body))
    do {
        let response = try await http.execute(request, timeout: timeout)
        // Read at most a little of the answer: it is only waited for, never used.
        _ = try? await response.body.collect(upTo: 64 * 1024)
        guard (200..<300).contains(response.status.code) else {
            return .failed("HTTP \(response.status.code) from \(ChannelURL.redacted(url))")
        }
        return .sent
    } catch {
        return .failed("no answer from \(ChannelURL.redacted(url)): \(error)")
    }
}

/// The scheme, host and port of `url`, for messages: a path may name a private topic or hook.
enum ChannelURL {
    static func redacted(_ url: String) -> String {
        guard let parts = URLComponents(string: url), let scheme = parts.scheme, let host = parts.host else {
            return "the channel's URL"
        }
        return "\(scheme)://\(host)" + (parts.port.map { ":\($0)" } ?? "")
    }
}

extension NotificationSenders {
    /// The HTTP client of every channel, for the process's life: redirects are not followed (a
    /// channel's URL is where its notifications go, and nowhere else), a connection is bounded by
    /// five seconds.
    package static let http: HTTPClient = {
        var configuration = HTTPClient.Configuration(redirectConfiguration: .disallow)
        configuration.timeout = .init(connect: .seconds(5), read: NotificationSenders.timeout)
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }()
}
