import Testing
import TrellisCore

@Suite("Browse: PERM_IDs, REFCONs, requests and rows")
struct BrowseModelTests {
    @Test(
        "PERM_IDs read back; unknown kinds and empty keys are refused",
        arguments: [
            ("plant:7", true), ("button:a:b", true), ("model:m1", true), ("tree:1", false), ("plant:", false),
            ("plant", false)
        ])
    func permIDs(text: String, valid: Bool) {
        let ref = EntityRef(permID: text)
        #expect((ref != nil) == valid)
        if let ref { #expect(ref.permID == text) }
    }

    @Test("a REFCON belongs to its PERM_ID only")
    func refcons() {
        let plant = EntityRef(.plant, "7")
        #expect(plant.refcon == #"{"key":"7","kind":"plant"}"#)
        #expect(plant.refconProblem(plant.refcon) == nil)
        #expect(plant.refconProblem(EntityRef(.plant, "8").refcon) != nil)
        #expect(plant.refconProblem("{}") != nil)
        #expect(
            BrowseTarget(permID: "plant:7", refcon: EntityRef(.device, "7").refcon).resolve()
                == .failure(
                    BrowseMissing(permID: "plant:7", reason: "the REFCON belongs to another entity than its PERM_ID")))
        #expect(BrowseTarget(permID: "plant:7", refcon: nil).resolve() == .success(plant))
    }

    @Test(
        "requests",
        arguments: [
            (#"{"requestKey":"ROOT"}"#, BrowseRequest.root(offset: 0, limit: 500)),
            (#"{"requestKey":"ROOT","offset":10,"limit":20}"#, .root(offset: 10, limit: 20)),
            (
                #"{"requestKey":"DRILL","entities":[{"PERM_ID":"plant:1","REFCON":"x"}]}"#,
                .drill([BrowseTarget(permID: "plant:1", refcon: "x")])
            ),
            (#"{"requestKey":"DETAIL","entities":[]}"#, .detail([]))
        ])
    func requests(json: String, expected: BrowseRequest) throws {
        let request = try JSONRequest.parse(Array(json.utf8)).get()
        #expect(try BrowseRequest.parse(request).get() == expected)
    }

    @Test(
        "bad requests name the member",
        arguments: [
            ("{}", "requestKey"), (#"{"requestKey":"ALL"}"#, "requestKey"),
            (#"{"requestKey":"ROOT","limit":0}"#, "limit"),
            (#"{"requestKey":"DRILL"}"#, "entities"),
            (#"{"requestKey":"DRILL","entities":[{"REFCON":"x"}]}"#, "entities"),
            (#"{"requestKey":"ROOT","entities":[]}"#, "entities")
        ])
    func bad(json: String, member: String) throws {
        let request = try JSONRequest.parse(Array(json.utf8)).get()
        guard case let .failure(error) = BrowseRequest.parse(request) else {
            Issue.record("accepted \(json)")
            return
        }
        #expect(error.code == .invalidRequest && error.message.contains(member))
    }

    @Test("rows: children as a JSON list, properties in their fixed order, absent facts as empty strings")
    func rows() {
        let facts = BrowseFacts(
            ref: EntityRef(.model, "m1"), values: ["id": "m1", "name": "node", "device_count": "2"],
            children: [EntityRef(.device, "a"), EntityRef(.device, "b")])
        #expect(
            BrowsePresenter.navigationRow(facts)
                == [
                    "model:m1", #"{"key":"m1","kind":"model"}"#, "Models", "node", "2 devices",
                    #"["device:a","device:b"]"#
                ])
        let detail = BrowsePresenter.detailRow(facts)
        #expect(detail[4] == "m1" && detail[5] == "")
        #expect(
            detail[6]
                == #"[{"key":"id","label":"Model","value":"m1"},{"key":"name","label":"Name","value":"node"},{"key":"devices","label":"Devices","value":""},{"key":"latest_build","label":"Latest build","value":""},{"key":"latest_build_at","label":"Latest build at","value":""}]"#
        )
    }
}
