/// A setting that lists entries separated by commas (`http.allowed_hosts`,
/// `buttons.socketio_allowed_origins`), read once for every such list: each entry trimmed of spaces
/// and tabs, empty ones skipped, and `*` taken to mean every entry rather than read as one.
struct CommaList {
    /// The entries as `read` gave them.
    var entries: Set<String> = []
    /// Whether `*` was listed.
    var any = false

    /// The entry `read` refused, as written.
    struct Refused: Error {
        let entry: String
    }

    /// Reads `list`, each entry by `read`, which gives the entry as it is kept, or nil when it is not one.
    static func read(_ list: String, _ read: (String) -> String?) -> Result<CommaList, Refused> {
        var result = CommaList()
        for entry in list.split(separator: ",").map({ SocketIOPressPolicy.trimmed($0) }) where !entry.isEmpty {
            if entry == "*" {
                result.any = true
                continue
            }
            guard let kept = read(String(entry)) else { return .failure(Refused(entry: String(entry))) }
            result.entries.insert(kept)
        }
        return .success(result)
    }
}
