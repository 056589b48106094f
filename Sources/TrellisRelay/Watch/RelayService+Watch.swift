import Foundation
import TrellisCore
import TrellisMQTTTypes

extension RelayService {
    /// What a watcher sends on the watch's request topic: `{"seconds":N}`, the stream kept on for
    /// N seconds (1 to ``TrafficWatch/longestWatch``) from now.
    struct WatchRequest: Decodable {
        var seconds: Double
    }

    /// What the relay answers a watch request with, on ``RelaySettings/watchReplyTopic``: that it
    /// streams, until when, and on which topic.
    struct WatchReply: Encodable {
        var relay: String
        var until: String
        var topic: String
    }

    /// Turns the stream on for a watcher's request, and says so on this relay's reply topic; a
    /// request that cannot be read is logged and otherwise left alone (the topic is the operators').
    func noteWatchRequest(_ message: MQTTMessage) {
        let engine = self.engine
        guard !message.retain,
            let request = try? JSONDecoder().decode(WatchRequest.self, from: Data(message.payload)),
            request.seconds.isFinite, request.seconds >= 1
        else {
            logger.warning(
                "a watch request that is not {\"seconds\":N} (N from 1 to \(Int(TrafficWatch.longestWatch)), not retained) is left alone",
                metadata: ["topic": "\(message.topic)"])
            return
        }
        let until = engine.watch.watch(for: request.seconds, at: Date())
        let reply = WatchReply(
            relay: engine.settings.clientID, until: ISO8601Time.format(until), topic: engine.settings.watchEventsTopic)
        do {
            try outlet.publish(
                MQTTMessage(
                    topic: engine.settings.watchReplyTopic, payload: JSONEnvelope.encode(reply), qos: .atMostOnce))
        } catch {
            logger.debug("could not answer a watch request", metadata: ["error": "\(error)"])
        }
    }
}
