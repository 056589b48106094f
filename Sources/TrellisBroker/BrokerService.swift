import Logging
import ServiceLifecycle

/// Keeps the child Mosquitto for as long as Trellis runs, and stops it last on shutdown.
///
/// The broker is started before the service group (so a start failure is one clear error
/// before anything else runs); this service watches it and stops it when the group shuts down.
/// It is listed first in the group, so it is shut down after the relay has said `offline`.
public struct BrokerService: Service {
    /// The broker died while Trellis was running.
    public struct BrokerExited: Error, CustomStringConvertible {
        public var description: String { "the mosquitto child process exited unexpectedly; see its log" }
    }

    let broker: MosquittoProcess
    let logger: Logger

    public init(broker: MosquittoProcess, logger: Logger) {
        self.broker = broker
        self.logger = logger
    }

    public func run() async throws {
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            if broker.pid == nil {
                throw BrokerExited()
            }
            try? await Task.sleep(for: .milliseconds(250))
        }
        await broker.stop()
    }
}
