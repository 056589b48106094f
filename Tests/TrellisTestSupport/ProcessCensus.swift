import Foundation
import Synchronization
import Testing

/// Which tests start a process, and which: with `TRELLIS_TEST_SPAWN_LOG` naming a file, each start of
/// a Mosquitto, of the `trellis` binary or of another tool writes a line to it, the running test's id
/// and what it started (`mosquitto`, `trellis`, `tool:<path>`). The file is emptied when the test
/// process first writes to it: it holds one run. The suite's cost is mostly such
/// tests, so the file says where it goes: `cut -f1 FILE | sort -u | wc -l` counts the tests that
/// start one (docs/architecture.md). Without the variable it does nothing.
public enum ProcessCensus {
    private static let file: Mutex<FileHandle?> = Mutex(
        ProcessInfo.processInfo.environment["TRELLIS_TEST_SPAWN_LOG"].flatMap { path in
            _ = FileManager.default.createFile(atPath: path, contents: nil)
            return FileHandle(forWritingAtPath: path)
        })

    /// Notes that the running test (if any) starts `what`.
    public static func started(_ what: String) {
        file.withLock { handle in
            guard let handle else { return }
            let test = Test.current.map { "\($0.id)" } ?? "-"
            handle.write(Data("\(test)\t\(what)\n".utf8))
        }
    }
}
