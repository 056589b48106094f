import TrellisCore

extension WireImport {
    /// Puts one segment in its direction's order and reads the MQTT packets it completes.
    mutating func receive(
        _ segment: TCPSegment, direction: WireDirection, at microseconds: Int64, in connection: inout WireConnection
    ) {
        var stream = connection[direction]
        defer { connection[direction] = stream }
        guard !stream.stopped else { return }
        let label = connection.name + " (\(direction.rawValue))"
        func stop(_ message: String, at time: Int64 = microseconds) {
            stream.stopped = true
            events.append(.problem(WireProblem(connection: label, microseconds: time, message)))
        }
        if segment.truncated {
            stop(
                "a segment was cut by the capture's snap length (captured \(segment.payload.count) bytes of its payload); capture with tcpdump -s 0; the rest of this direction is left out"
            )
            return
        }
        let chunks: [ArraySlice<UInt8>]
        switch stream.tcp.accept(segment, at: microseconds) {
        case let .data(data): chunks = data
        case let .gap(time):
            stop(
                "bytes are missing from the capture before this segment (a packet was not captured); the rest of this direction is left out",
                at: time)
            return
        }
        for chunk in chunks {
            if stream.framer == nil {
                if let refusal = Self.refusal(of: chunk, port: connection.key.brokerPort) {
                    stop(refusal)
                    return
                }
                stream.framer = MQTTFramer(synced: !stream.tcp.startedMidStream)
            }
            stream.framer!.append(chunk)
            while true {
                let frame: MQTTFramer.Frame?
                do {
                    frame = try stream.framer!.next()
                } catch {
                    stop("\(error.message); the rest of this direction is left out")
                    return
                }
                guard let frame else { break }
                do {
                    try handle(frame, direction: direction, stream: &stream, connection: &connection, at: microseconds)
                } catch {
                    if connection.version == nil && assumedVersion == nil {
                        if !connection.reportedVersionUnknown {
                            connection.reportedVersionUnknown = true
                            events.append(
                                .problem(
                                    WireProblem(
                                        connection: connection.name, microseconds: microseconds,
                                        "the connection's CONNECT was not captured, so its MQTT version is unknown; give --mqtt-version 3.1.1 or 5 to read it"
                                    )))
                        }
                        stream.stopped = true
                    } else {
                        stop(
                            "\(error.message) in a packet of type \(frame.type); the rest of this direction is left out"
                        )
                    }
                    return
                }
            }
        }
    }

    /// TLS and WebSocket on a port given as MQTT: named and refused.
    static func refusal(of first: ArraySlice<UInt8>, port: UInt16) -> String? {
        if let type = first.u8(0), type == 0x16 || type == 0x17, first.u8(1) == 3, (first.u8(2) ?? 9) <= 4 {
            return
                "port \(port) carries TLS (a \(type == 0x16 ? "ClientHello" : "TLS record")), which cannot be read from a capture; capture the plain MQTT port instead"
        }
        if first.starts(with: Array("GET ".utf8)) || first.starts(with: Array("HTTP/".utf8)) {
            return
                "port \(port) carries HTTP (MQTT over WebSocket), which the importer does not read; capture the plain MQTT port instead"
        }
        return nil
    }

    /// One MQTT packet: a CONNECT sets the version and client id, PUBLISHes become messages,
    /// acknowledgements release packet ids.
    mutating func handle(
        _ frame: MQTTFramer.Frame, direction: WireDirection, stream: inout WireStream,
        connection: inout WireConnection, at microseconds: Int64
    ) throws(WireProblem) {
        let version = connection.version ?? assumedVersion
        if frame.type != 1 && version == nil { throw WireProblem("the MQTT version is unknown") }
        switch try MQTTPacket.decode(frame, version: version) {
        case let .connect(level, clientID):
            connection.version = MQTTWireVersion(level: level)
            connection.clientID = clientID
        case let .connack(assigned):
            if let assigned, connection.clientID?.isEmpty ?? true { connection.clientID = assigned }
        case let .acknowledgement(type, packetID):
            if type == 6 {
                stream.unreleased.remove(packetID) // PUBREL: the sender's QoS 2 id may be used again
            } else if type == 4 {
                // PUBACK goes the other way: it frees the id of the QoS 1 PUBLISH it answers.
                let other: WireDirection = direction == .toBroker ? .toClient : .toBroker
                connection[other].unacknowledged.remove(packetID)
            }
        case let .publish(publish):
            try emit(publish, direction: direction, stream: &stream, connection: connection, at: microseconds)
        case .other:
            break
        }
    }

    mutating func emit(
        _ publish: MQTTPacket.Publish, direction: WireDirection, stream: inout WireStream,
        connection: WireConnection, at microseconds: Int64
    ) throws(WireProblem) {
        var topic = publish.topic
        if let alias = publish.topicAlias {
            if topic.isEmpty {
                guard let known = stream.aliases[alias] else {
                    throw WireProblem("a PUBLISH uses topic alias \(alias), which was never set")
                }
                topic = known
            } else {
                stream.aliases[alias] = topic
            }
        }
        guard !topic.isEmpty else { throw WireProblem("a PUBLISH has an empty topic and no topic alias") }
        // MQTT forbids these in a PUBLISH's topic; a broker would have closed the connection.
        if topic.utf8.contains(where: { $0 == 0 || $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "#") }) {
            throw WireProblem("a PUBLISH topic holds a wildcard (+ or #) or a NUL character, which MQTT does not allow")
        }
        var redelivered = false
        if let id = publish.packetID {
            let copy =
                publish.qos == 2
                ? !stream.unreleased.insert(id).inserted
                : publish.dup && stream.unacknowledged.contains(id)
            if publish.qos == 1 { stream.unacknowledged.insert(id) }
            if copy {
                statistics.duplicates += 1
                return
            }
            redelivered = publish.dup
        }
        if redelivered { statistics.redelivered += 1 }
        statistics.publishes += 1
        let record = CaptureRecord(
            microseconds: microseconds, topic: topic, payload: publish.payload, qos: publish.qos,
            retain: publish.retain, properties: publish.properties,
            client: direction == .toBroker && connection.clientID?.isEmpty == false ? connection.clientID : nil)
        events.append(
            .message(
                WireMessage(
                    direction: direction, connection: connection.name, clientID: connection.clientID,
                    record: record, redelivered: redelivered)))
    }
}
