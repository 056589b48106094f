import TrellisApplication
import ArgumentParser
import Foundation
import TrellisCore
import TrellisMQTT

/// How `trellis record` and `trellis replay` log in to a broker (each takes `--broker` itself:
/// required for one, optional for the other).
struct BrokerLogin: ParsableArguments {
    @Option(name: .long, help: "MQTT client id (default trellis-<command>-<process id>).")
    var clientId: String?

    @Option(
        name: .long,
        help:
            "User name to log in to the broker with (default: the address's user info; else, for `record` on a loopback broker, the local operator that `trellis run` keeps in its state directory, state.dir of trellis.yaml or TRELLIS_STATE_DIR, else trellis-state, or the Debian package in /etc/trellis, when its password file is there)."
    )
    var username: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "File whose first line is the broker password (else the address's user info, else TRELLIS_PASSWORD).",
            valueName: "file"))
    var passwordFile: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "With mqtts://: the CAs (PEM file or hashed directory) that may sign the broker's certificate (default: the system's CAs).",
            valueName: "file|dir"))
    var tlsCa: String?

    @Option(
        name: .long,
        help: ArgumentHelp("With mqtts://: client certificate (PEM) for brokers that require one.", valueName: "file"))
    var tlsCert: String?

    @Option(
        name: .long,
        help: ArgumentHelp("With mqtts://: the client certificate's private key (PEM, unencrypted).", valueName: "file")
    )
    var tlsKey: String?

    /// What `--broker` accepts, for help texts.
    static let addressHelp = "mqtt://HOST[:PORT], mqtts://HOST[:PORT] (TLS) or HOST:PORT, user:password@ allowed"

    /// The client settings for the broker at `text` (see ``BrokerURL``), or a reported error.
    func configuration(for text: String, as command: String) async throws -> MQTTConfiguration {
        let url: BrokerURL
        do {
            url = try BrokerURL(parsing: text)
        } catch {
            throw fail("--broker: \(error)")
        }
        let tlsFlags = [("--tls-ca", tlsCa), ("--tls-cert", tlsCert), ("--tls-key", tlsKey)].filter { $0.1 != nil }.map(
            \.0)
        var tls: MQTTTLSConfiguration?
        if url.usesTLS {
            tls = MQTTTLSConfiguration(certificateAuthorities: tlsCa, certificate: tlsCert, privateKey: tlsKey)
            do {
                try tls?.validate()
            } catch {
                throw fail(error.message)
            }
        } else if !tlsFlags.isEmpty {
            throw fail(
                "\(tlsFlags.joined(separator: ", ")) need an mqtts:// broker address: write mqtts://\(url.hostAndPort)")
        }
        var password = url.password ?? ProcessInfo.processInfo.environment["TRELLIS_PASSWORD"]
        if let passwordFile {
            guard let contents = try? String(contentsOfFile: passwordFile, encoding: .utf8) else {
                throw fail("cannot read the password file \(passwordFile)")
            }
            password = String(contents.split(separator: "\n", omittingEmptySubsequences: false).first ?? "")
        }
        var user = username ?? url.username
        // `record` only reads; `replay` publishes what a capture holds, which as the operator could run any
        // operator action, so it logs in as the operator only when told to.
        if ["record", "watch", "trace"].contains(command), user == nil, passwordFile == nil,
            let local = try await Self.localOperator(host: url.host)
        {
            (user, password) = (local.username, local.password)
        }
        return MQTTConfiguration(
            host: url.host, port: url.port,
            clientID: clientId ?? "trellis-\(command)-\(ProcessInfo.processInfo.processIdentifier)",
            username: user, password: user == nil ? nil : password,
            reconnectDelay: 0.1...2, tls: tls)
    }

    /// The local operator's login that `trellis run` keeps (``LocalAccounts``), for a broker on this
    /// machine: read from the state directory's `operator.password`, never from an argument.
    static func localOperator(host: String) async throws -> (username: String, password: String)? {
        guard ["127.0.0.1", "localhost", "::1"].contains(host) || host.hasPrefix("127.") else { return nil }
        // `trellis run`'s state directory (state.dir as it reads it), else where the Debian package keeps the
        // operator's password.
        let state = try await EffectiveConfiguration.forCommand(file: nil).string("state.dir")
        let directories = [state, "/etc/trellis"]
        return directories.lazy.compactMap {
            LocalAccounts.password(at: LocalAccounts.passwordPath(of: LocalAccounts.operatorAccount, in: $0))
        }
        .first.map { (LocalAccounts.operatorAccount, $0) }
    }

    /// A started client connected to the broker at `text`, or a reported error.
    func connect(to text: String, as command: String) async throws -> MQTTClient {
        let configuration = try await configuration(for: text, as: command)
        let client: MQTTClient
        do {
            client = try MQTTClient(configuration: configuration)
        } catch {
            throw fail("cannot create an MQTT client: \(error)")
        }
        client.start()
        do {
            try await client.waitUntilConnected(timeout: .seconds(10))
        } catch {
            await client.shutdown()
            throw fail("\(error)")
        }
        return client
    }
}

/// The broker a relay is on, for the commands that talk to it there (`watch`, `trace`).
struct RelayBroker: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "The broker's address: \(BrokerLogin.addressHelp) (default 127.0.0.1:1883, where `trellis run` starts its own).",
            valueName: "url"))
    var broker = "127.0.0.1:1883"
}

/// Reading capture files for `trellis replay`.
enum CaptureInput {
    /// The records of `path` up to its first bad line; the bad line (if any) is returned so the
    /// caller can stop there. With `skipBadLines`, bad lines are reported and left out.
    static func read(_ path: String, skipBadLines: Bool) throws -> (records: [CaptureRecord], stop: CaptureFileError?) {
        let contents: [UInt8]
        if path == "-" {
            contents = Array(FileHandle.standardInput.readDataToEndOfFile())
        } else {
            guard let data = FileManager.default.contents(atPath: path) else {
                throw fail("cannot read the capture file \(path): \(unreadableReason(path))")
            }
            contents = Array(data)
        }
        var records: [CaptureRecord] = []
        for line in CaptureFile.lines(of: contents, name: path == "-" ? "<stdin>" : path) {
            switch line.result {
            case let .success(record):
                records.append(record)
            case let .failure(error):
                if skipBadLines {
                    warn("\(error) (line skipped)")
                } else {
                    return (records, error)
                }
            }
        }
        return (records, nil)
    }
}

/// Prints a warning line on standard error.
func warn(_ message: String) {
    FileHandle.standardError.write(Data("trellis: warning: \(message)\n".utf8))
}

/// Prints a line of information on standard error.
func note(_ message: String) {
    FileHandle.standardError.write(Data("trellis: \(message)\n".utf8))
}

/// Why `path` could not be read, in a few words.
func unreadableReason(_ path: String) -> String {
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { return "no such file" }
    if isDirectory.boolValue { return "it is a directory" }
    return FileManager.default.isReadableFile(atPath: path) ? "it could not be read" : "permission denied"
}
