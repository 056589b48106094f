/// A capture file's contents, read line by line: each non-blank line is a record or a problem
/// that names the file, the line number and what is wrong.
public enum CaptureFile {
    /// One non-blank line of a capture.
    public struct Line: Sendable {
        /// 1-based line number in the file.
        public var number: Int
        public var result: Result<CaptureRecord, CaptureFileError>
    }

    /// Splits `contents` into lines (LF or CRLF) and decodes each non-blank one.
    /// `name` is how problems refer to the file.
    public static func lines(of contents: [UInt8], name: String) -> [Line] {
        var lines: [Line] = []
        var number = 0
        var start = 0
        func take(_ end: Int) {
            number += 1
            var slice = contents[start..<end]
            if slice.last == 0x0D { slice = slice.dropLast() }
            if slice.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { return }
            let result = CaptureRecord.decode(bytes: Array(slice))
                .mapError { CaptureFileError(file: name, line: number, message: $0.message) }
            lines.append(Line(number: number, result: result))
        }
        for (index, byte) in contents.enumerated() where byte == 0x0A {
            take(index)
            start = index + 1
        }
        if start < contents.count { take(contents.count) }
        return lines
    }

    /// Every record of `contents`; the first bad line is thrown unless `skipBadLines`, in which
    /// case bad lines are left out and returned as `skipped`.
    public static func records(of contents: [UInt8], name: String, skipBadLines: Bool = false)
        throws(CaptureFileError) -> (records: [CaptureRecord], skipped: [CaptureFileError])
    {
        var records: [CaptureRecord] = []
        var skipped: [CaptureFileError] = []
        for line in lines(of: contents, name: name) {
            switch line.result {
            case let .success(record): records.append(record)
            case let .failure(error):
                guard skipBadLines else { throw error }
                skipped.append(error)
            }
        }
        return (records, skipped)
    }

    /// The records as a capture file: one line each, each ending in a line break.
    public static func text(of records: [CaptureRecord]) -> String {
        records.map { $0.jsonLine + "\n" }.joined()
    }
}

/// A bad line of a capture file: `capture.jsonl:12: "qos" must be 0, 1 or 2, not 3`.
public struct CaptureFileError: Error, Sendable, Hashable, CustomStringConvertible {
    public var file: String
    public var line: Int
    public var message: String

    public init(file: String, line: Int, message: String) {
        self.file = file
        self.line = line
        self.message = message
    }

    public var description: String { "\(file):\(line): \(message)" }
}
