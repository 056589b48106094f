/// A readable difference between an expected and an actual list of capture lines.
public enum CaptureDiff {
    /// Nil when `expected` and `actual` are equal; otherwise a unified-style diff: lines only
    /// expected start with `-`, lines only produced start with `+`, with up to `context`
    /// common lines around each change and the line numbers of each side.
    public static func diff(expected: [String], actual: [String], context: Int = 2) -> String? {
        guard expected != actual else { return nil }
        let script = edits(expected, actual)
        // Group changes with their context into hunks.
        let changed = script.indices.filter { script[$0].kind != .same }
        var hunks: [ClosedRange<Int>] = []
        for index in changed {
            let range = max(0, index - context)...min(script.count - 1, index + context)
            if let last = hunks.last, range.lowerBound <= last.upperBound + 1 {
                hunks[hunks.count - 1] = last.lowerBound...range.upperBound
            } else {
                hunks.append(range)
            }
        }
        var out: [String] = []
        let removed = script.filter { $0.kind == .removed }.count
        let added = script.filter { $0.kind == .added }.count
        out.append("\(removed) expected line(s) missing (-), \(added) unexpected line(s) produced (+)")
        for hunk in hunks {
            let first = script[hunk.lowerBound]
            out.append("@@ expected line \(first.expectedLine), actual line \(first.actualLine) @@")
            for edit in script[hunk] {
                switch edit.kind {
                case .same: out.append("  " + edit.text)
                case .removed: out.append("- " + edit.text)
                case .added: out.append("+ " + edit.text)
                }
            }
        }
        return out.joined(separator: "\n")
    }

    struct Edit {
        enum Kind { case same, removed, added }
        var kind: Kind
        var text: String
        /// 1-based position in each side where this edit stands.
        var expectedLine: Int
        var actualLine: Int
    }

    /// The shortest edit script by longest common subsequence; quadratic, which suits captures
    /// of a few thousand lines. Beyond that, lines are compared position by position.
    static func edits(_ a: [String], _ b: [String]) -> [Edit] {
        var script: [Edit] = []
        guard a.count * b.count <= 25_000_000 else {
            for index in 0..<max(a.count, b.count) {
                if index < a.count, index < b.count, a[index] == b[index] {
                    script.append(Edit(kind: .same, text: a[index], expectedLine: index + 1, actualLine: index + 1))
                    continue
                }
                if index < a.count {
                    script.append(Edit(kind: .removed, text: a[index], expectedLine: index + 1, actualLine: index + 1))
                }
                if index < b.count {
                    script.append(Edit(kind: .added, text: b[index], expectedLine: index + 1, actualLine: index + 1))
                }
            }
            return script
        }
        let n = a.count, m = b.count
        var lengths = [[Int32]](repeating: [Int32](repeating: 0, count: m + 1), count: n + 1)
        for i in stride(from: n - 1, through: 0, by: -1) {
            for j in stride(from: m - 1, through: 0, by: -1) {
                lengths[i][j] = a[i] == b[j] ? lengths[i + 1][j + 1] + 1 : max(lengths[i + 1][j], lengths[i][j + 1])
            }
        }
        var i = 0, j = 0
        while i < n || j < m {
            if i < n, j < m, a[i] == b[j] {
                script.append(Edit(kind: .same, text: a[i], expectedLine: i + 1, actualLine: j + 1))
                i += 1; j += 1
            } else if i < n, j == m || lengths[i + 1][j] >= lengths[i][j + 1] {
                script.append(Edit(kind: .removed, text: a[i], expectedLine: i + 1, actualLine: j + 1))
                i += 1
            } else {
                script.append(Edit(kind: .added, text: b[j], expectedLine: i + 1, actualLine: j + 1))
                j += 1
            }
        }
        return script
    }
}
