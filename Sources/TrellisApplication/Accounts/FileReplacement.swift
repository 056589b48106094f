import Foundation
import SystemPackage

/// Writes `bytes` to a new file beside `path`, with the old file's mode and owner (`newFileMode` and
/// ours when there was none), and renames it over `path`: a broker never reads half a file, and a
/// file Mosquitto reads as its own group (the package's password file and ACL) stays readable to it
/// and no wider. The mode is set before a byte is written.
package func replaceFile(_ path: String, with bytes: [UInt8], newFileMode: mode_t) throws {
    try createParentDirectory(of: path)
    var old = stat()
    let exists = stat(path, &old) == 0
    let temporary = path + ".trellis-\(UUID().uuidString)"
    do {
        let file = try FileDescriptor.open(
            FilePath(temporary), .writeOnly, options: [.create, .exclusiveCreate],
            permissions: [.ownerReadWrite])
        try file.closeAfter {
            guard fchmod(file.rawValue, exists ? old.st_mode & 0o7777 : newFileMode) == 0 else {
                throw Errno(rawValue: errno)
            }
            // Another owner (the broker's user, when root runs this) is kept where we may set it.
            if exists, old.st_uid != geteuid() || old.st_gid != getegid() {
                _ = fchown(file.rawValue, old.st_uid, old.st_gid)
            }
            _ = try file.writeAll(bytes)
        }
        guard rename(temporary, path) == 0 else { throw Errno(rawValue: errno) }
    } catch {
        unlink(temporary)
        throw error
    }
}
