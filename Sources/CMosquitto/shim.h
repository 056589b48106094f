#ifndef TRELLIS_CMOSQUITTO_SHIM_H
#define TRELLIS_CMOSQUITTO_SHIM_H

#include <mosquitto.h>
#include <mqtt_protocol.h>

#endif
