import Foundation
import Hummingbird
import HummingbirdWebSocket
import Logging
import TrellisSocketIO

extension SocketIOServer {
    /// Upgrades `transport=websocket` requests: a new session, or the upgrade of a polling one.
    /// A refused page (foreign origin, unknown `Host`) is not upgraded (Hummingbird answers a refused upgrade with 400).
    func shouldUpgrade(_ request: Request, from address: String) -> RouterShouldUpgrade {
        if origins.refusal(request, metrics: sessions.metrics, now: sessions.now) != nil { return .dontUpgrade }
        let query = request.uri.queryParameters
        guard EngineIOVersion(query: query.get("EIO")) != nil, query.get("transport") == "websocket" else {
            sessions.metrics.refused("bad_websocket_request")
            return .dontUpgrade
        }
        if let sid = query.get("sid") {
            guard let connection = sessions.find(sid), connection.transport == .polling, !connection.isClosed else {
                sessions.metrics.refused("unknown_session")
                return .dontUpgrade
            }
        } else if let refusal = sessions.admission(from: address) {
            sessions.metrics.refused(refusal.label)
            return .dontUpgrade
        }
        return .upgrade([:])
    }

    /// Runs one WebSocket: reads packets into the session and writes what the session has for the
    /// client once the WebSocket is its transport. The session ends with the WebSocket (unless the
    /// WebSocket was only a failed upgrade probe, after which polling goes on).
    func webSocket(
        inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter, request: Request, from address: String
    ) async {
        let query = request.uri.queryParameters
        guard let version = EngineIOVersion(query: query.get("EIO")) else { return }
        let connection: SocketIOConnection
        if let sid = query.get("sid") {
            guard let found = sessions.find(sid), found.attachWebSocket() else { return }
            connection = found
        } else {
            switch await sessions.open(
                version: version, transport: .websocket, address: address,
                token: query.get("token"), headerToken: Self.headerToken(request))
            {
            case let .failure(refusal):
                sessions.metrics.refused(refusal.label)
                return
            case let .success(opened):
                _ = opened.attachWebSocket()
                connection = opened
            }
        }
        await withTaskGroup(of: Void.self) { group in
            // The writer starts once the WebSocket is the session's transport: at once for a new
            // session, after the client's `5` for an upgrade.
            var writing = connection.transport == .websocket
            if writing {
                group.addTask { await self.write(connection, to: outbound) }
            } else {
                group.addTask { await self.closeIfPollingEnds(connection, outbound) }
            }
            let version = connection.version
            do {
                for try await message in inbound.messages(maxSize: connection.limits.maximumPayloadBytes) {
                    let decoded: Result<EngineIOPacket, EngineIOError>
                    switch message {
                    case let .text(text): decoded = EngineIOPacket.decode(text: text[...], version)
                    case let .binary(buffer): decoded = EngineIOPacket.decode(binary: Array(buffer: buffer)[...])
                    }
                    switch decoded {
                    case let .failure(error):
                        sessions.metrics.malformed(error.rawValue)
                        logger.debug(
                            "malformed Socket.IO WebSocket frame",
                            metadata: ["sid": "\(connection.id)", "reason": "\(error.rawValue)"])
                    case let .success(packet):
                        for answer in await sessions.receive(packet, via: .websocket, on: connection) {
                            try await outbound.write(.text(answer.encodedText(version)))
                        }
                    }
                    if !writing, connection.transport == .websocket {
                        writing = true
                        logger.debug(
                            "Socket.IO session upgraded to the WebSocket", metadata: ["sid": "\(connection.id)"])
                        group.addTask { await self.write(connection, to: outbound) }
                    }
                    if connection.isClosed { break }
                }
            } catch {
                logger.debug("Socket.IO WebSocket ended", metadata: ["sid": "\(connection.id)", "error": "\(error)"])
            }
            if connection.transport == .websocket {
                await sessions.close(connection, .transportError)
            }
            if !writing { group.cancelAll() }
        }
        try? await outbound.close(.normalClosure, reason: nil)
    }

    /// The WebSocket of an upgrade that has not completed: closed once its polling session ends
    /// (a ping or upgrade timeout, a close), so that a client which opens it and sends nothing does
    /// not hold the connection after its session is gone. Ends when the upgrade completes (the
    /// writer then closes the WebSocket with the session) or the task is cancelled.
    private func closeIfPollingEnds(_ connection: SocketIOConnection, _ outbound: WebSocketOutboundWriter) async {
        // Checked once a second, the sweeper's own period: the session's state changes under its lock
        // with no wake-up for a transport that is not its own.
        while !Task.isCancelled, connection.transport == .polling {
            if connection.isClosed {
                try? await outbound.close(.goingAway, reason: nil)
                return
            }
            try? await Task.sleep(for: .seconds(1))
        }
    }

    /// Writes the session's packets; ends when the session does, closing the WebSocket.
    private func write(_ connection: SocketIOConnection, to outbound: WebSocketOutboundWriter) async {
        let version = connection.version
        while true {
            let packets = connection.update { $0.drain() }
            for packet in packets {
                do {
                    try await outbound.write(.text(packet.encodedText(version)))
                } catch {
                    logger.debug(
                        "Socket.IO WebSocket write failed", metadata: ["sid": "\(connection.id)", "error": "\(error)"])
                    return
                }
            }
            if connection.isClosed {
                try? await outbound.close(.normalClosure, reason: nil)
                return
            }
            await connection.waitForOutgoing(timeout: .seconds(60))
        }
    }
}
