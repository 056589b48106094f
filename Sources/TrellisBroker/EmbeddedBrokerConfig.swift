import Foundation

/// The broker configuration compiled into `trellis`, identical to the repository's
/// `broker.conf`, so `trellis run` can start its broker even where that file is not at hand.
public enum EmbeddedBrokerConfig {
    /// Writes the embedded configuration into `directory` (as `broker.conf`), with its
    /// persistence, password file and ACL in that directory, and returns the file's path.
    public static func write(into directory: String) throws -> String {
        let path = (directory as NSString).appendingPathComponent("broker.conf")
        let absolute = URL(fileURLWithPath: directory).standardizedFileURL.path
        let adjusted = text.replacingOccurrences(of: " trellis-state/", with: " \(absolute)/")
        try adjusted.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }
}
