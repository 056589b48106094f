import Foundation
import TrellisMQTT

/// Mosquitto's dynamic security plugin as Debian's mosquitto package installs it, for brokers that
/// keep their accounts in it.
public enum DynamicSecurityPlugin {
    /// The plugin's path: under /usr/lib/<architecture>/ on Debian, or /usr/lib, /usr/local/lib.
    public static var path: String? {
        let name = "mosquitto_dynamic_security.so"
        let architectures = ((try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib")) ?? [])
            .filter { $0.hasSuffix("-linux-gnu") }.map { "/usr/lib/\($0)" }
        return (architectures + ["/usr/lib", "/usr/local/lib"]).map { "\($0)/\(name)" }
            .first { FileManager.default.fileExists(atPath: $0) }
    }

    /// The broker configuration lines that load the plugin with its configuration file `config`, as
    /// broker.dynsec.conf does.
    public static func configLines(config: String) throws -> [String] {
        guard let path else {
            throw TimeoutError(message: "mosquitto_dynamic_security.so is not installed: apt-get install -y mosquitto")
        }
        return ["plugin \(path)", "plugin_opt_config_file \(config)", "use_username_as_clientid true"]
    }
}

/// What happens to a login: accepted, or the broker's refusal.
public enum LoginOutcome: Sendable, Equatable {
    case accepted
    case refused(String)
}

extension TestBroker {
    /// Tries to log in as `username` and reports the first outcome: the connection, or the first
    /// failed attempt (a refused login is not retried here), within `timeout`.
    public func login(_ username: String, password: String, timeout: Duration = .seconds(20)) async throws
        -> LoginOutcome
    {
        let client = try MQTTClient(
            configuration: MQTTConfiguration(
                host: host, port: port, clientID: username, username: username, password: password,
                reconnectDelay: 1...1))
        client.start()
        do {
            let outcome = try await Self.firstOutcome(of: client, username: username, timeout: timeout)
            await client.shutdown()
            return outcome
        } catch {
            await client.shutdown()
            throw error
        }
    }

    private static func firstOutcome(of client: MQTTClient, username: String, timeout: Duration) async throws
        -> LoginOutcome
    {
        try await withThrowingTaskGroup(of: LoginOutcome.self) { group in
            group.addTask {
                for await event in client.events {
                    switch event {
                    case .connected: return .accepted
                    case let .connectFailed(reason, _): return .refused(reason)
                    case .disconnected: continue
                    }
                }
                return .refused("the client stopped")
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                throw TimeoutError(message: "no outcome of \(username)'s login within \(timeout)")
            }
            let outcome = try await group.next()!
            group.cancelAll()
            return outcome
        }
    }
}
