import Foundation
import TrellisBroker
import TrellisMQTT

/// Talks to Mosquitto's dynamic security plugin over MQTT as its administration account: sends a
/// request on `$CONTROL/dynamic-security/v1` and waits for its answer, so a change is in effect when
/// `trellis users` returns. Every failure is one sentence that says what to check; none carries the
/// password or the request (which may hold one).
package struct DynamicSecurityControl {
    package var address: BrokerAddress
    package var admin: String
    package var passwordFile: String
    /// How long to wait for the login, and for each answer.
    package var timeout: Duration

    package init(address: BrokerAddress, admin: String, passwordFile: String, timeout: Duration) {
        (self.address, self.admin, self.passwordFile, self.timeout) = (address, admin, passwordFile, timeout)
    }

    /// A command and the plugin's errors that are no failure for it (a role that is already there).
    package struct Step {
        var command: DynamicSecurityCommand
        var tolerated: Set<String> = []
    }

    /// Logs in, runs `body` with the connection, and disconnects.
    package func connected<T>(_ body: (Connection) async throws -> T) async throws -> T {
        let password = try readPassword()
        var configuration = MQTTConfiguration(
            host: address.host, port: address.port,
            clientID: "\(admin)-\(UUID().uuidString.prefix(8))",
            username: admin, password: password, reconnectDelay: 0.5...0.5)
        configuration.keepAlive = 30
        let client = try MQTTClient(configuration: configuration)
        // Kept and sent with the CONNECT's first subscriptions, so `connected` means answers can come.
        try await client.subscribe(DynamicSecurityCommand.responseTopic)
        client.start()
        do {
            try await waitForLogin(client)
            let result = try await body(Connection(client: client, control: self))
            await client.shutdown()
            return result
        } catch {
            await client.shutdown()
            throw error
        }
    }

    package func readPassword() throws -> String {
        do {
            let text = try String(contentsOfFile: passwordFile, encoding: .utf8)
            let password = text.trimmingCharacters(in: .newlines)
            guard !password.isEmpty else {
                throw fail("\(passwordFile) is empty: it should hold the password of \(admin)")
            }
            return password
        } catch let error as CommandFailure {
            throw error
        } catch {
            throw fail(
                "cannot read the password of \(admin) from \(passwordFile): \(describe(error)); "
                    + "`trellis users init` (or `trellis users migrate`) writes it")
        }
    }

    /// What a refused or failed login attempt of `admin` at `address` is reported as: a refusal (the broker's
    /// reason says not authorised) names the profile and the account to check, anything else the address.
    package static func loginFailure(reason: String, address: BrokerAddress, admin: String) -> CommandFailure {
        guard reason.lowercased().contains("not authori") else {
            return fail("cannot reach the broker at \(address): \(reason); is it running? (--broker names another)")
        }
        return fail(
            "the broker at \(address) refused the login of \(admin) (\(reason)): is it running "
                + "the dynamic security profile (broker.dynsec.conf), and is \(admin) its administration account?")
    }

    /// Waits for the first connection, and fails at the first refused or failed attempt.
    private func waitForLogin(_ client: MQTTClient) async throws {
        let address = self.address, admin = self.admin, timeout = self.timeout
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for await event in client.events {
                    switch event {
                    case .connected:
                        return
                    case let .connectFailed(reason, _):
                        throw Self.loginFailure(reason: reason, address: address, admin: admin)
                    case .disconnected:
                        continue
                    }
                }
                try Task.checkCancellation()
                throw fail("the connection to the broker at \(address) ended before it was made")
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                throw fail("no connection to the broker at \(address) within \(timeout); is it running?")
            }
            try await group.next()
            group.cancelAll()
        }
    }

    /// One logged-in connection.
    package struct Connection {
        let client: MQTTClient
        let control: DynamicSecurityControl

        /// Sends `steps` as one request and returns the plugin's answers, in order; throws on an
        /// error not tolerated by its step.
        @discardableResult
        func run(_ steps: [Step]) async throws -> [DynamicSecurityResponse.Answer] {
            let id = UUID().uuidString
            var commands = steps.map(\.command)
            for index in commands.indices { commands[index].correlationData = "\(id)-\(index)" }
            let payload = try JSONEncoder().encode(["commands": commands])
            let answers = try await send(payload, correlation: "\(id)-0")
            guard answers.count == steps.count else {
                throw fail("the dynamic security plugin answered \(answers.count) of \(steps.count) commands")
            }
            for (step, answer) in zip(steps, answers) {
                if let error = answer.error, !step.tolerated.contains(error) {
                    throw DynamicSecurityFailure(command: answer.command, reason: error)
                }
            }
            return answers
        }

        /// Publishes `payload` and returns the answer whose first command carries `correlation`; one
        /// timeout covers both the broker's acknowledgement and the plugin's answer, so a lost
        /// acknowledgement ends the command with a sentence rather than a wait without end. An
        /// answer that comes before the acknowledgement is queued by the client until it is read.
        private func send(_ payload: Data, correlation: String) async throws -> [DynamicSecurityResponse.Answer] {
            let client = self.client, control = self.control, timeout = control.timeout
            return try await withThrowingTaskGroup(of: [DynamicSecurityResponse.Answer].self) { group in
                group.addTask {
                    do {
                        try await client.publishAndWait(topic: DynamicSecurityCommand.topic, payload: Array(payload))
                    } catch is CancellationError {
                        throw CancellationError()
                    } catch {
                        throw fail(
                            "the broker refused the request of \(control.admin) (\(describe(error))): "
                                + "\(control.admin) may administer the dynamic security plugin only with its admin role"
                        )
                    }
                    for await message in client.messages where message.topic == DynamicSecurityCommand.responseTopic {
                        // An answer that cannot be read is the plugin's trouble, not another client's answer.
                        guard
                            let response = try? JSONDecoder().decode(
                                DynamicSecurityResponse.self, from: Data(message.payload))
                        else {
                            throw fail(
                                "the dynamic security plugin answered with \(message.payload.count) bytes that are not its JSON; "
                                    + "its state may be damaged: restart the broker")
                        }
                        guard response.responses.first?.correlationData == correlation else { continue }
                        return response.responses
                    }
                    // One refusal reaches the user: a wait cut short by the timeout's own failure says nothing.
                    try Task.checkCancellation()
                    throw fail("the connection to the broker ended before the dynamic security plugin answered")
                }
                group.addTask {
                    try await Task.sleep(for: timeout)
                    throw fail(
                        "no answer on \(DynamicSecurityCommand.responseTopic) within \(timeout) (--timeout): is the "
                            + "dynamic security plugin loaded (broker.dynsec.conf)?")
                }
                let first = try await group.next()!
                group.cancelAll()
                return first
            }
        }
    }
}

/// A command the plugin refused, with its reason (`Client not found`).
package struct DynamicSecurityFailure: Error, CustomStringConvertible {
    package var command: String
    package var reason: String
    package var description: String { "the dynamic security plugin refused \(command): \(reason)" }
}
