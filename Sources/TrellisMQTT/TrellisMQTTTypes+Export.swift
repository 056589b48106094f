// The MQTT value types live below the client, in TrellisMQTTTypes, so that the protocol and
// state logic (TrellisCore) and the handlers (TrellisRelay) use them without linking the client.
// A user of the client gets them with it.
@_exported import TrellisMQTTTypes
