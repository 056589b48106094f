@testable import TrellisCore

/// libFuzzer entry: `trellis plants import-host`'s reader of host.py's `userdata/<phone>.json`
/// files (a JSON list of `{"Name", "Sensors"}`, the sensors a JSON list in a string, each read as
/// `int(x, 16)`), and the merge of several phones' lists. What it takes must be usable as it is.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHostImport(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let maximum = 64
    let read = HostUserdata.read(phone: "phone", contents: bytes, maximumNameLength: maximum)
    for plant in read.plants {
        precondition(
            !plant.sensors.isEmpty && Set(plant.sensors).count == plant.sensors.count,
            "a plant without sensors, or one twice")
        precondition(
            plant.sensors.allSatisfy { SensorAddress.hostRead($0) == $0 }, "a sensor address that is not canonical")
        guard case let .success(name) = PlantName.validate(plant.name, maximumLength: maximum), name == plant.name
        else {
            preconditionFailure("a name Trellis would refuse")
        }
    }
    // The same file on two phones merges into the same plants, seen on both, with no clash.
    let merged = HostUserdata.merge([
        read.plants, read.plants.map { .init(name: $0.name, sensors: $0.sensors.reversed(), phones: ["other"]) }
    ])
    precondition(
        merged.plants.count + merged.problems.count == Set(read.plants.map(\.name)).count, "a plant lost in the merge")
    precondition(merged.plants.allSatisfy { $0.phones == ["phone", "other"] }, "a merged plant without both phones")
    return 0
}
