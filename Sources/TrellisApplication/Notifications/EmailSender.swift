import Foundation
import NIOCore
import NIOSSL
import TrellisCore
import TrellisStore

/// An email channel: each notification one message through the channel's SMTP server, over TLS
/// (STARTTLS, or `smtps://`) with the server's certificate checked, after logging in with the
/// account of the channel's `login_file` (docs/notifications.md).
struct EmailSender: NotificationSending {
    let channel: String
    let to: String
    let from: String
    let server: SMTPClient.Server
    let login: SMTPConversation.Login
    let tls: NIOSSLContext
    /// How long connecting may take, and the whole conversation, connecting included.
    var connectTimeout: TimeAmount = .seconds(5)
    var timeout: TimeAmount = .seconds(30)

    /// - Throws: ``CommandFailure`` when the login is not a user line and a password line, or the
    ///   CA file cannot be used.
    init(
        channel: String, to: String, host: String, port: Int, from: String?, implicitTLS: Bool, caFile: String?,
        login text: String?
    ) throws(CommandFailure) {
        let place = "notifications.channels.\(channel)"
        let lines = (text ?? "").split(separator: "\n", omittingEmptySubsequences: false).map {
            $0.hasSuffix("\r") ? String($0.dropLast()) : String($0)
        }
        guard lines.count == 2, !lines[0].isEmpty, !lines[1].isEmpty else {
            throw CommandFailure(
                "\(place).login_file must hold the user on its first line and the password on the second")
        }
        login = SMTPConversation.Login(user: lines[0], password: lines[1])
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.minimumTLSVersion = .tlsv12
        configuration.certificateVerification = .fullVerification
        if let caFile { configuration.trustRoots = .file(caFile) }
        do {
            tls = try NIOSSLContext(configuration: configuration)
        } catch {
            throw CommandFailure("\(place).ca_file: cannot use \(caFile ?? "the system's CAs"): \(error)")
        }
        (self.channel, self.to, self.from) = (channel, to, from ?? "trellis@\(Self.hostName)")
        server = SMTPClient.Server(host: host, port: port, implicitTLS: implicitTLS)
    }

    func send(_ notification: OutboxNotification) async -> NotificationDelivery {
        let conversation = SMTPConversation(
            server: server.name, clientName: Self.hostName, from: from, to: to, message: message(notification).bytes,
            login: login, secure: server.implicitTLS)
        return await SMTPClient.deliver(
            conversation, to: server, tls: tls, connectTimeout: connectTimeout, timeout: timeout)
    }

    /// The notification as a message: its title the subject, its body the text, with a line that
    /// says where it came from; the same Message-ID on every attempt.
    func message(_ notification: OutboxNotification) -> EmailMessage {
        EmailMessage(
            from: from, to: to, subject: notification.title,
            body: notification.body + "\n\n-- \nTrellis, channel \(channel), event \(notification.eventKey)",
            date: notification.created,
            messageID: EmailMessage.messageID(
                channel: channel, eventKey: notification.eventKey, created: notification.created, from: from),
            extraHeaders: [("X-Trellis-Event", notification.eventKey)])
    }

    /// This host's name as EHLO gives it and the default sender's domain: letters, digits, `.` and
    /// `-` of the kernel's host name (`gethostname`, no lookup that could wait on DNS), `localhost`
    /// when nothing is left.
    static let hostName: String = {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "localhost" }
        let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            .filter { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "-") }
        return name.isEmpty ? "localhost" : name
    }()
}
