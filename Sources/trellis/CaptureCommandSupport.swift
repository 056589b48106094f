import ArgumentParser
import Foundation
import TrellisBroker
import TrellisCore
import TrellisMQTT

/// How `trellis record` and `trellis replay` log in to a broker (each takes `--broker` itself:
/// required for one, optional for the other).
struct BrokerLogin: ParsableArguments {
    @Option(name: .long, help: "MQTT client id (default trellis-<command>-<process id>).")
    var clientId: String?

    @Option(name: .long, help: "User name to log in to the broker with.")
    var username: String?

    @Option(name: .long, help: ArgumentHelp("File whose first line is the broker password (or TRELLIS_PASSWORD).", valueName: "file"))
    var passwordFile: String?

    /// A started client connected to the broker at `text` (`HOST:PORT`), or a reported error.
    func connect(to text: String, as command: String) async throws -> MQTTClient {
        guard let address = BrokerAddress(parsing: text) else {
            throw fail("--broker \(text) is not an address such as 127.0.0.1:1883")
        }
        var password = ProcessInfo.processInfo.environment["TRELLIS_PASSWORD"]
        if let passwordFile {
            guard let contents = try? String(contentsOfFile: passwordFile, encoding: .utf8) else {
                throw fail("cannot read the password file \(passwordFile)")
            }
            password = String(contents.split(separator: "\n", omittingEmptySubsequences: false).first ?? "")
        }
        let configuration = MQTTConfiguration(
            host: address.host, port: address.port,
            clientID: clientId ?? "trellis-\(command)-\(ProcessInfo.processInfo.processIdentifier)",
            username: username, password: username == nil ? nil : password,
            reconnectDelay: 0.1...2)
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
            throw fail("cannot connect to the broker at \(address): \(error)")
        }
        return client
    }
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
