/// The seeded shuffle of search results.
///
/// Every species carries a fixed 62-bit ``symbolHash(_:)`` of its symbol; a search with seed `s`
/// orders its matches by `hash XOR mask(s)` (then by symbol), which the store computes in SQL.
/// The same seed gives the same order every time, on every page; different seeds give different
/// orders. Paging is by the last key shown, so an order never needs to be held in memory.
public enum CatalogShuffle {
    /// Keys are 62 bits wide: non-negative in a signed 64-bit column on every database.
    static let keyMask: UInt64 = (1 << 62) - 1

    /// A fixed, well-mixed 62-bit hash of a symbol (FNV-1a, then SplitMix64's finalizer).
    public static func symbolHash(_ symbol: String) -> Int64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in symbol.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01B3
        }
        return Int64(bitPattern: mix(hash) & keyMask)
    }

    /// The 62-bit mask a seed stands for.
    public static func mask(seed: UInt64) -> Int64 {
        Int64(bitPattern: mix(seed &+ 0x9E37_79B9_7F4A_7C15) & keyMask)
    }

    /// The sort key of a species under a seed.
    public static func key(hash: Int64, seed: UInt64) -> Int64 {
        hash ^ mask(seed: seed)
    }

    /// `species` in the order of `seed`, the order the store returns them in.
    public static func order(_ species: [Species], seed: UInt64) -> [Species] {
        species.map { (key(hash: symbolHash($0.symbol), seed: seed), $0) }
            .sorted { $0.0 != $1.0 ? $0.0 < $1.0 : $0.1.symbol < $1.1.symbol }
            .map(\.1)
    }

    /// SplitMix64's finalizer.
    static func mix(_ value: UInt64) -> UInt64 {
        var z = value
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// The largest seed accepted: seeds travel as JSON numbers, exact up to 2^53.
    public static let maximumSeed: UInt64 = 1 << 53
}

/// Where the next page of a search starts: the seed and the last result shown.
///
/// Written as opaque URL-safe text, `c1.<seed>.<key>.<symbol>` in base64url without padding.
public struct CatalogCursor: Sendable, Hashable {
    public var seed: UInt64
    /// The sort key of the last species shown.
    public var key: Int64
    /// The symbol of the last species shown (ties on the key are broken by symbol).
    public var symbol: String

    public init(seed: UInt64, key: Int64, symbol: String) {
        (self.seed, self.key, self.symbol) = (seed, key, symbol)
    }

    /// The cursor as text for `next_cursor`.
    public var encoded: String {
        Base64URL.encode(Array("c1.\(seed).\(key).\(symbol)".utf8))
    }

    /// Reads a `cursor` member; nil when it is not one Trellis wrote.
    public init?(encoded text: String) {
        guard text.utf8.count <= 128, let bytes = Base64URL.decode(text),
            let plain = String(validating: bytes, as: UTF8.self)
        else { return nil }
        let parts = plain.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0] == "c1", let seed = UInt64(parts[1]), seed <= CatalogShuffle.maximumSeed,
            let key = Int64(parts[2]), Species.isValidSymbol(String(parts[3]))
        else { return nil }
        self.init(seed: seed, key: key, symbol: String(parts[3]))
    }
}

/// base64url without padding (RFC 4648 §5).
enum Base64URL {
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        var index = 0
        while index < bytes.count {
            let chunk = Array(bytes[index..<min(index + 3, bytes.count)])
            let value = chunk.enumerated().reduce(UInt32(0)) { $0 | UInt32($1.element) << (16 - 8 * UInt32($1.offset)) }
            for position in 0..<(chunk.count + 1) {
                out.append(alphabet[Int((value >> (18 - 6 * UInt32(position))) & 0x3F)])
            }
            index += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func decode(_ text: String) -> [UInt8]? {
        var values: [UInt8] = []
        for byte in text.utf8 {
            guard let index = alphabet.firstIndex(of: byte) else { return nil }
            values.append(UInt8(index))
        }
        guard values.count % 4 != 1 else { return nil }
        var out: [UInt8] = []
        var index = 0
        while index < values.count {
            let chunk = Array(values[index..<min(index + 4, values.count)])
            let value = chunk.enumerated().reduce(UInt32(0)) { $0 | UInt32($1.element) << (18 - 6 * UInt32($1.offset)) }
            for position in 0..<(chunk.count - 1) {
                out.append(UInt8((value >> (16 - 8 * UInt32(position))) & 0xFF))
            }
            index += 4
        }
        return out
    }
}
