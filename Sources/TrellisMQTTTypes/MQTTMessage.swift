/// The delivery guarantee of a publish or subscription, as MQTT defines it.
public enum QoS: Int, Sendable, Hashable, Comparable, CaseIterable {
    /// Fire and forget: the message may be lost.
    case atMostOnce = 0
    /// Acknowledged: the message arrives at least once, perhaps more.
    case atLeastOnce = 1
    /// Four-way handshake: the message arrives exactly once.
    case exactlyOnce = 2

    public static func < (lhs: QoS, rhs: QoS) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// One MQTT v5 user property: a name and a value, both UTF-8, order preserved.
public struct UserProperty: Sendable, Hashable {
    public var name: String
    public var value: String

    public init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}

/// The MQTT v5 publish properties Trellis reads and writes.
///
/// Response topic and correlation data make request/response work (`mosquitto_rr`);
/// user properties and content type are carried through unchanged.
///
/// Most messages carry none, and a message is copied several times on its way through the relay
/// (into the stream, each handler, each reply): the four values live in one shared box, made only
/// when one is set and copied only when a shared one is changed, so that copying a message costs
/// one reference count for its properties instead of four.
public struct MQTTProperties: Sendable, Hashable {
    /// The four values; nil while none is set. Seen by ``isEmpty``'s inlined code, which every
    /// message's path asks.
    @usableFromInline private(set) var box: Box?

    public init(
        responseTopic: String? = nil,
        correlationData: [UInt8]? = nil,
        userProperties: [UserProperty] = [],
        contentType: String? = nil
    ) {
        let values = Values(
            responseTopic: responseTopic, correlationData: correlationData,
            userProperties: userProperties, contentType: contentType)
        box = values.isEmpty ? nil : Box(values)
    }

    /// Where the requester expects its reply.
    public var responseTopic: String? {
        get { box?.values.responseTopic }
        set { self[inPlace: \.responseTopic] = newValue }
        _modify { yield &self[inPlace: \.responseTopic] }
    }

    /// Opaque bytes the requester uses to match a reply with its request.
    public var correlationData: [UInt8]? {
        get { box?.values.correlationData }
        set { self[inPlace: \.correlationData] = newValue }
        _modify { yield &self[inPlace: \.correlationData] }
    }

    /// Name/value pairs in the order they were sent.
    public var userProperties: [UserProperty] {
        get { box?.values.userProperties ?? [] }
        set { self[inPlace: \.userProperties] = newValue }
        _modify { yield &self[inPlace: \.userProperties] }
    }

    /// The MIME type of the payload, when the publisher set one.
    public var contentType: String? {
        get { box?.values.contentType }
        set { self[inPlace: \.contentType] = newValue }
        _modify { yield &self[inPlace: \.contentType] }
    }

    /// True when no property is set, so nothing needs to go on the wire.
    @inlinable public var isEmpty: Bool { box == nil }

    public static func == (lhs: MQTTProperties, rhs: MQTTProperties) -> Bool {
        lhs.box === rhs.box || (lhs.box?.values ?? Values()) == (rhs.box?.values ?? Values())
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(box?.values ?? Values())
    }

    /// One of the values, changed where it is: the box is made this value's own first (a new one
    /// when there is none or another copy shares it), so that `properties.userProperties.append(…)`
    /// appends in place, where a getter and a setter would copy the whole list on every append; and
    /// dropped once nothing is set, so that an emptied value equals and costs like a new one.
    private subscript<Value>(inPlace path: WritableKeyPath<Values, Value>) -> Value {
        get { (box?.values ?? Values())[keyPath: path] }
        _modify {
            if box == nil {
                box = Box(Values())
            } else if !isKnownUniquelyReferenced(&box) {
                box = Box(box!.values)
            }
            defer { if box!.values.isEmpty { box = nil } }
            yield &box!.values[keyPath: path]
        }
    }

    struct Values: Hashable {
        var responseTopic: String?
        var correlationData: [UInt8]?
        var userProperties: [UserProperty] = []
        var contentType: String?

        var isEmpty: Bool {
            responseTopic == nil && correlationData == nil && userProperties.isEmpty && contentType == nil
        }
    }

    /// Changed only through ``subscript(inPlace:)``, and only while no other copy holds it.
    @usableFromInline final class Box: @unchecked Sendable {
        var values: Values
        init(_ values: Values) { self.values = values }
    }
}

/// A message received from the broker, copied out of libmosquitto's buffers.
///
/// It owns all of its storage, so it can cross threads and outlive the callback
/// that produced it.
public struct MQTTMessage: Sendable, Hashable {
    /// The topic the message was published on.
    public var topic: String
    /// The payload exactly as received: any bytes, UTF-8 or not.
    public var payload: [UInt8]
    /// The QoS the message was delivered with.
    public var qos: QoS
    /// True when the broker delivered a retained message (on subscribe), not a live publish.
    public var retain: Bool
    /// The v5 properties that came with it.
    public var properties: MQTTProperties
    /// For a message received at QoS 1 or 2, its packet identifier and connection; nil for
    /// QoS 0 and for messages built to be published.
    public var delivery: MQTTDelivery?

    public init(
        topic: String,
        payload: [UInt8],
        qos: QoS = .atMostOnce,
        retain: Bool = false,
        properties: MQTTProperties = MQTTProperties(),
        delivery: MQTTDelivery? = nil
    ) {
        (self.topic, self.payload, self.qos, self.retain) = (topic, payload, qos, retain)
        (self.properties, self.delivery) = (properties, delivery)
    }

    /// Convenience for text payloads.
    public init(
        topic: String, text: String, qos: QoS = .atMostOnce, retain: Bool = false,
        properties: MQTTProperties = MQTTProperties()
    ) {
        self.init(topic: topic, payload: Array(text.utf8), qos: qos, retain: retain, properties: properties)
    }

    /// The payload as UTF-8 text, or nil when it is not valid UTF-8.
    public var text: String? {
        String(validating: payload, as: UTF8.self)
    }
}
