import Foundation
import SystemPackage

/// Trellis's MQTT client id when `broker.client_id` names none: `trellis-` and 20 random letters and
/// digits, made at the first start and kept in `<state.dir>/client-id` (mode 0600), read back at
/// every start so the broker's persistent session and the store's delivery marks stay Trellis's.
///
/// Mosquitto closes a connection when another connects with its client id, and with a clean start
/// of false hands the newcomer its session. Where anonymous clients are let in (the default LAN
/// profile) a well-known id such as `trellis` lets anyone knock Trellis off the broker in a loop;
/// an id nobody can guess or read (no topic an app, device, sensor or button may read names it)
/// cannot be taken.
package enum ClientIDFile {
    package static let fileName = "client-id"
    package static let prefix = "trellis-"

    /// The file in the state directory `state`.
    package static func path(in state: String) -> String {
        (state as NSString).appendingPathComponent(fileName)
    }

    /// The id kept in `state`, made and written first when there is none.
    /// - Throws: ``CredentialsError`` naming the file when it cannot be read, written, or holds no client id.
    package static func ensure(in state: String) throws -> String {
        let path = path(in: state)
        if let kept = try read(path) { return kept }
        let made = prefix + randomPassword()
        do {
            try create(path, holding: made)
        } catch let error as Errno where error == .fileExists {
            // Another start in the same state directory made it first: its id is the one.
            if let kept = try read(path) { return kept }
            throw CredentialsError(description: "\(path) appeared empty while Trellis was making it")
        } catch {
            throw CredentialsError(description: "cannot write Trellis's client id to \(path): \(describe(error))")
        }
        return made
    }

    /// The id in the file at `path`; nil when there is no file.
    package static func read(_ path: String) throws -> String? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw CredentialsError(description: "cannot read Trellis's client id from \(path): \(describe(error))")
        }
        let id = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard isValid(id) else {
            throw CredentialsError(
                description: "\(path) holds no client id (1–64 letters, digits, '-' or '_'): "
                    + "remove it to have a new one made (the broker's session of the old one is then lost), or set broker.client_id"
            )
        }
        return id
    }

    /// An id the file may hold: what Trellis makes, or one written in its place by hand.
    package static func isValid(_ id: String) -> Bool {
        (1...64).contains(id.utf8.count)
            && id.utf8.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                    || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
            }
    }

    /// Writes `id` to a new file beside `path`, mode 0600 before a byte is written, then links it to
    /// `path` only if there is none (`Errno.fileExists` otherwise): never half a file, never two ids.
    private static func create(_ path: String, holding id: String) throws {
        let temporary = path + ".trellis-\(UUID().uuidString)"
        defer { unlink(temporary) }
        let file = try FileDescriptor.open(
            FilePath(temporary), .writeOnly, options: [.create, .exclusiveCreate],
            permissions: [.ownerReadWrite])
        try file.closeAfter {
            guard fchmod(file.rawValue, 0o600) == 0 else { throw Errno(rawValue: errno) }
            _ = try file.writeAll(Array((id + "\n").utf8))
            guard fsync(file.rawValue) == 0 else { throw Errno(rawValue: errno) }
        }
        guard link(temporary, path) == 0 else { throw Errno(rawValue: errno) }
    }
}
