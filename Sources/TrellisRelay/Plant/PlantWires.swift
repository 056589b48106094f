/// The wire forms of one answer in one dialect, in order: none (a dialect that cannot carry it),
/// one (nearly every answer), or several (an answer the original dialect splits into messages).
///
/// One form is held as it is, not in an array of its own: a request answered on the network
/// thread would otherwise allocate and free an array of one on every reply, only to map it into
/// the messages to publish.
struct PlantWires {
    private let first: [UInt8]?
    private let rest: [[UInt8]]

    /// No wire form.
    init() {
        first = nil
        rest = []
    }

    /// One wire form.
    init(_ one: [UInt8]) {
        first = one
        rest = []
    }

    /// Every form of `all`, in order.
    init(_ all: [[UInt8]]) {
        first = all.first
        rest = Array(all.dropFirst())
    }

    /// `transform` of each form, in order.
    func map<T>(_ transform: ([UInt8]) -> T) -> [T] {
        guard let first else { return [] }
        guard !rest.isEmpty else { return [transform(first)] }
        return [transform(first)] + rest.map(transform)
    }
}
