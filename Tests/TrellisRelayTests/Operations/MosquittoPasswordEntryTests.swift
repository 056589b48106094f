import Testing
import TrellisBroker

/// Reading Mosquitto's password file for `trellis users migrate`: only a `$7$` hash (PBKDF2-SHA512,
/// Mosquitto 2) gives the plugin's `iterations`, `salt` and `password`; anything else gives none,
/// and no line makes the reader fail.
@Suite("Mosquitto password file entries")
struct MosquittoPasswordEntryTests {
    @Test(
        "a $7$ hash splits into iterations, salt and hash; other forms and malformed ones give none",
        arguments: [
            (
                "$7$101$k9YynJTqo1x4ORdZ$I4E9y+NA/a83==",
                PBKDF2Hash?.some(PBKDF2Hash(iterations: 101, salt: "k9YynJTqo1x4ORdZ", hash: "I4E9y+NA/a83=="))
            ),
            ("$6$c2FsdA==$aGFzaA==", nil),
            ("$7$0$salt$hash", nil),
            ("$7$many$salt$hash", nil),
            ("$7$101$$hash", nil),
            ("$7$101$salt$", nil),
            ("$7$101$salt$hash$extra", nil),
            ("plain", nil),
            ("", nil)
        ])
    func hashes(_ hash: String, _ expected: PBKDF2Hash?) {
        #expect(MosquittoPasswordEntry(username: "u", hash: hash).pbkdf2 == expected)
    }

    @Test("lines are split at the first colon; blank lines, comments and lines without a colon are skipped")
    func parse() {
        let text = "# made by mosquitto_passwd\n\nalice:$7$101$s$h\n  bob:$6$x$y  \nno colon here\nodd:na:me\n"
        #expect(
            MosquittoPasswordEntry.parse(text) == [
                MosquittoPasswordEntry(username: "alice", hash: "$7$101$s$h"),
                MosquittoPasswordEntry(username: "bob", hash: "$6$x$y"),
                MosquittoPasswordEntry(username: "odd", hash: "na:me")
            ])
    }
}
