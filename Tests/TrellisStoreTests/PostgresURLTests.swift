import Testing
@testable import TrellisStore
import TrellisStoreSQLite
import TrellisStorePostgres
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

    @Test(
        "what is wrong is said, without the password",
        arguments: [
            ("mysql://u:pw@h/db", "must look like postgres://"),
            ("postgres://u:pw@/db", "names no host"),
            ("postgres://h:5432/db", "names no user"),
            ("postgres://u:pw@h:5432", "names no database"),
            ("postgres://u:pw@h/db?sslmode=maybe", "sslmode must be one of"),
            ("postgres://u:pw@h/db?timeout=3", "unknown option timeout")
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

    @Test(
        "off this machine only verify-full or an explicit disable is accepted; the refusal names both",
        arguments: [
            "postgres://u:pw@db.lan/db", "postgres://u:pw@192.168.1.20/db?sslmode=prefer",
            "postgres://u:pw@db.lan/db?sslmode=require", "postgresql://u:pw@[fd00::5]:5433/db",
            "postgres://u:pw@128.0.0.1/db", "postgres://u:pw@localhost.example.com/db"
        ])
    func plainTextOffTheMachine(_ text: String) {
        do {
            _ = try PostgresURL(text)
            Issue.record("\(text) was accepted")
        } catch {
            #expect("\(error)".contains("off this machine"), "\(error)")
            #expect("\(error)".contains("?sslmode=verify-full"))
            #expect("\(error)".contains("?sslmode=disable to accept plain text knowingly"))
            #expect(!"\(error)".contains("pw"))
        }
    }

    @Test(
        "verify-full and an explicit disable are accepted anywhere; loopback hosts keep every mode",
        arguments: [
            "postgres://u:pw@db.lan/db?sslmode=verify-full", "postgres://u:pw@10.0.0.5/db?sslmode=disable",
            "postgres://u:pw@127.0.0.1/db", "postgres://u:pw@127.1.2.3:5433/db?sslmode=require",
            "postgres://u:pw@localhost/db?sslmode=prefer", "postgres://u:pw@LOCALHOST/db", "postgres://u:pw@[::1]/db"
        ])
    func accepted(_ text: String) throws {
        _ = try PostgresURL(text)
    }

    @Test("the rule as a value: loopback names and addresses are local, others are not")
    func locality() {
        for host in ["localhost", "127.0.0.1", "127.255.0.9", "::1", "/var/run/postgresql", "db.localhost"] {
            #expect(PostgresURL.isLocal(host), "\(host)")
        }
        for host in ["db.lan", "10.0.0.1", "127.0.0", "127.0.0.1.example.com", "::2", "1270.0.0.1", ""] {
            #expect(!PostgresURL.isLocal(host), "\(host)")
        }
        #expect(PostgresURL.transportRefusal(host: "db.lan", mode: .verifyFull) == nil)
        #expect(PostgresURL.transportRefusal(host: "db.lan", mode: .disable) == nil)
        #expect(PostgresURL.transportRefusal(host: "db.lan", mode: .require) != nil)
        #expect(PostgresURL.transportRefusal(host: "127.0.0.1", mode: .prefer) == nil)
    }
}
