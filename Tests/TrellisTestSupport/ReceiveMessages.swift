import TrellisMQTT

/// Consumes `client.messages` directly, as the relay does, until `count` messages have come, and
/// returns them in order; `handle` runs for each one (it must call `messageHandled()` when the
/// client has a window). Throws a ``TimeoutError`` when fewer came within `timeout`: the client then
/// stops receiving, which ends the stream, so a lost message fails the test instead of hanging it.
public func receive(
    _ count: Int, from client: MQTTClient, timeout: Duration = .seconds(60),
    _ handle: (MQTTMessage) async -> Void
) async throws -> [MQTTMessage] {
    let watchdog = Task {
        try await Task.sleep(for: timeout)
        client.stopReceiving()
    }
    defer { watchdog.cancel() }
    var received: [MQTTMessage] = []
    for await message in client.messages {
        received.append(message)
        await handle(message)
        if received.count == count { break }
    }
    guard received.count == count else {
        throw TimeoutError(
            message: "timed out after \(timeout) waiting for \(count) messages; received \(received.count)")
    }
    return received
}
