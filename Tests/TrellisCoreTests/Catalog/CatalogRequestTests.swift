import Foundation
import Testing
import TrellisCore

@Suite("Catalog requests: members checked before the store is touched")
struct CatalogRequestTests {
    static func parse(_ service: String, _ action: String, _ json: String, perClient: Bool = true)
        -> Result<CatalogRequest, JSONServiceError>
    {
        switch JSONRequest.parse(Array(json.utf8)) {
        case let .success(request):
            CatalogRequest.actions.parse(
                service: service, action: action, request, perClient: perClient,
                limits: CatalogLimits())
        case let .failure(error): .failure(error)
        }
    }

    @Test(
        "valid requests",
        arguments: [
            (
                "catalog", "search", #"{"moisture":"high","shade":"any","seed":7,"limit":10}"#,
                CatalogRequest.search(
                    filter: CatalogFilter(moisture: .high), seed: 7, cursor: nil, limit: 10, unseenOnly: false)
            ),
            (
                "catalog", "search", "",
                .search(filter: CatalogFilter(), seed: nil, cursor: nil, limit: 50, unseenOnly: false)
            ),
            ("catalog", "get", #"{"symbol":"NEEX"}"#, .get(symbol: "NEEX")),
            ("likes", "list", "{}", .listLikes),
            (
                "boards", "create", #"{"name":"  Shade  ","public":true}"#,
                .createBoard(name: "Shade", description: "", isPublic: true)
            ),
            (
                "boards", "update", #"{"board":3,"description":"x"}"#,
                .updateBoard(board: 3, name: nil, description: "x", isPublic: nil)
            ),
            ("boards", "add", #"{"board":3,"symbols":["A1","B2","A1"]}"#, .addToBoard(board: 3, symbols: ["A1", "B2"])),
            ("boards", "get", #"{"board":3,"owner":"ann"}"#, .getBoard(board: 3, owner: "ann")),
            ("plants", "link", #"{"plant":"Fern","symbol":"NEEX"}"#, .link(plant: "Fern", symbol: "NEEX"))
        ])
    func valid(service: String, action: String, json: String, expected: CatalogRequest) throws {
        #expect(try Self.parse(service, action, json).get() == expected)
    }

    @Test("a cursor carries its seed; a different seed beside it is refused")
    func cursorSeed() throws {
        let cursor = CatalogCursor(seed: 99, key: 5, symbol: "AB1").encoded
        let parsed = try Self.parse("catalog", "search", #"{"cursor":"\#(cursor)"}"#).get()
        #expect(
            parsed
                == .search(
                    filter: CatalogFilter(), seed: 99, cursor: CatalogCursor(seed: 99, key: 5, symbol: "AB1"),
                    limit: 50, unseenOnly: false))
        #expect(throws: JSONServiceError.self) {
            try Self.parse("catalog", "search", #"{"cursor":"\#(cursor)","seed":1}"#).get()
        }
    }

    @Test(
        "refusals name the member and give the code",
        arguments: [
            ("catalog", "search", #"{"limit":0}"#, true, JSONErrorCode.invalidRequest, "limit"),
            ("catalog", "search", #"{"min_temp":{"from":50,"to":10}}"#, true, .invalidRequest, "min_temp"),
            ("catalog", "search", #"{"min_temp":{"from":"cold"}}"#, true, .invalidRequest, "min_temp"),
            ("catalog", "search", #"{"seed":-1}"#, true, .invalidRequest, "seed"),
            ("catalog", "search", #"{"unseen_only":true}"#, false, .invalidRequest, "unseen_only"),
            ("catalog", "get", "{}", true, .invalidRequest, "symbol"),
            ("likes", "add", #"{"symbol":"NEEX"}"#, false, .invalidRequest, "per-client"),
            ("boards", "create", #"{"name":""}"#, true, .invalidRequest, "name"),
            ("boards", "create", #"{"name":"a\u0007b"}"#, true, .invalidRequest, "control"),
            ("boards", "create", #"{"name":"a","public":"yes"}"#, true, .invalidRequest, "public"),
            ("boards", "add", #"{"board":1,"symbols":[]}"#, true, .invalidRequest, "symbols"),
            ("boards", "add", #"{"board":0,"symbols":["A"]}"#, true, .invalidRequest, "board"),
            ("boards", "list", #"{"board":1}"#, true, .invalidRequest, "board"),
            ("plants", "unlink", #"{"plant":""}"#, true, .invalidRequest, "plant")
        ])
    func refused(service: String, action: String, json: String, perClient: Bool, code: JSONErrorCode, mention: String) {
        switch Self.parse(service, action, json, perClient: perClient) {
        case .success(let request): Issue.record("accepted \(request)")
        case .failure(let error):
            #expect(error.code == code)
            #expect(
                error.message.contains(mention)
                    || (mention == "per-client" && error.message.contains("trellis/clients/")), "\(error.message)")
        }
    }

    @Test("too many symbols at once is too_large")
    func tooMany() {
        let symbols = (0..<101).map { "\"S\($0)\"" }.joined(separator: ",")
        guard case let .failure(error) = Self.parse("boards", "add", #"{"board":1,"symbols":[\#(symbols)]}"#) else {
            Issue.record("accepted 101 symbols")
            return
        }
        #expect(error.code == .tooLarge)
    }

    /// docs/catalog.md's table of actions is ``CatalogRequest/actions``, in order.
    @Test("docs/catalog.md names every action, in order")
    func documented() throws {
        let docs = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("docs/catalog.md")
        let rows = try String(contentsOf: docs, encoding: .utf8).split(separator: "\n").compactMap { line -> String? in
            guard line.hasPrefix("| `"), let end = line.dropFirst(3).firstIndex(of: "`") else { return nil }
            let name = String(line[line.index(line.startIndex, offsetBy: 3)..<end])
            return CatalogRequest.actions.services.contains(where: { name.hasPrefix("\($0)/") }) && !name.contains("<")
                ? name : nil
        }
        #expect(rows == CatalogRequest.actions.all.map(\.path))
    }
}
