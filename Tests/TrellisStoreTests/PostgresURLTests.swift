import Testing
@testable import TrellisStore
@testable import TrellisStorePostgres

@Suite("PostgresURL")
struct PostgresURLTests {
    @Test("a full URL is read part by part; the password never shows")
    func full() throws {
        let url = try PostgresURL("postgres://trellis:s%40cret@db.local:6543/state?sslmode=verify-full")
        #expect(url.user == "trellis")
        #expect(url.password == "s@cret")
        #expect(url.host == "db.local")
        #expect(url.port == 6543)
        #expect(url.database == "state")
        #expect(url.sslMode == .verifyFull)
        #expect(url.description == "postgres://trellis:***@db.local:6543/state?sslmode=verify-full")
    }

    @Test("defaults: port 5432, sslmode prefer; postgresql:// and IPv6 hosts are read too")
    func defaults() throws {
        let url = try PostgresURL("postgresql://me@[::1]/db")
        #expect(url.port == 5432)
        #expect(url.sslMode == .prefer)
        #expect(url.host == "::1")
        #expect(url.password == nil)
        #expect(url.description == "postgres://me@[::1]:5432/db")
    }

    @Test("what is wrong is said, without the password", arguments: [
        ("mysql://u:pw@h/db", "must look like postgres://"),
        ("postgres://u:pw@/db", "names no host"),
        ("postgres://h:5432/db", "names no user"),
        ("postgres://u:pw@h:5432", "names no database"),
        ("postgres://u:pw@h/db?sslmode=maybe", "sslmode must be one of"),
        ("postgres://u:pw@h/db?timeout=3", "unknown option timeout"),
    ])
    func refused(_ text: String, _ reason: String) {
        do {
            _ = try PostgresURL(text)
            Issue.record("\(text) was accepted")
        } catch {
            #expect("\(error)".contains(reason), "\(error)")
            #expect(!"\(error)".contains("pw"))
        }
    }
}
