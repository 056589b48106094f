import Foundation
import SystemPackage
import TrellisMQTT

/// Writes `secret` and `terminator` to `path`, readable by its owner alone: the file is opened
/// (created with mode 0600, or emptied) and narrowed to 0600 before a byte of it is written.
package func writeSecret(_ secret: String, to path: String, terminator: String = "\n") throws {
    try createParentDirectory(of: path)
    let file = try FileDescriptor.open(
        FilePath(path), .writeOnly, options: [.create, .truncate], permissions: [.ownerReadWrite])
    try file.closeAfter {
        guard fchmod(file.rawValue, 0o600) == 0 else { throw Errno(rawValue: errno) }
        _ = try file.writeAll(Array((secret + terminator).utf8))
    }
}

/// A random password of 20 letters and digits, without the ones easily confused.
package func randomPassword() -> String {
    let alphabet = Array("abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789")
    var generator = SystemRandomNumberGenerator()
    return String((0..<20).map { _ in alphabet.randomElement(using: &generator)! })
}

/// An error's text for a message: an `errno` name, a Foundation error's description, or the error's own.
package func describe(_ error: any Error) -> String {
    if let error = error as? MQTTError { return error.message }
    if let error = error as? Errno { return "\(error)" }
    if let error = error as? CocoaError, let underlying = error.userInfo[NSUnderlyingErrorKey] as? NSError {
        return underlying.localizedDescription
    }
    return (error as NSError).localizedDescription
}
