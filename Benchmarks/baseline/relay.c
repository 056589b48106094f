/*
 * The benchmark's baseline: the least a relay over libmosquitto can do.
 * It republishes every message on rpi/torpi unchanged to rpi/fromrpi, and each message on
 * p2o/buttons/+/press to p2o/clients/c<n>/button-press for n in 0..fanout-1, at the QoS it arrived with.
 *
 *   cc -O2 -o relay relay.c -lmosquitto && ./relay PORT FANOUT
 */
#include <mosquitto.h>
#include <mqtt_protocol.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fanout = 100;

static void on_connect(struct mosquitto *mosq, void *obj, int rc, int flags, const mosquitto_property *props) {
    (void)obj; (void)flags; (void)props;
    if (rc != 0) return;
    mosquitto_subscribe_v5(mosq, NULL, "rpi/torpi", 1, MQTT_SUB_OPT_NO_LOCAL, NULL);
    mosquitto_subscribe_v5(mosq, NULL, "p2o/buttons/+/press", 1, MQTT_SUB_OPT_NO_LOCAL, NULL);
}

static void on_message(struct mosquitto *mosq, void *obj, const struct mosquitto_message *m, const mosquitto_property *props) {
    (void)obj; (void)props;
    if (strcmp(m->topic, "rpi/torpi") == 0) {
        mosquitto_publish_v5(mosq, NULL, "rpi/fromrpi", m->payloadlen, m->payload, m->qos, false, NULL);
        return;
    }
    const char *button = m->topic + strlen("p2o/buttons/");
    size_t length = strcspn(button, "/");
    char topic[128];
    for (int n = 0; n < fanout; n++) {
        snprintf(topic, sizeof topic, "p2o/clients/c%d/button-press", n);
        mosquitto_publish_v5(mosq, NULL, topic, (int)length, button, m->qos, false, NULL);
    }
}

int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: relay PORT [FANOUT]\n"); return 2; }
    if (argc > 2) fanout = atoi(argv[2]);
    mosquitto_lib_init();
    struct mosquitto *mosq = mosquitto_new("baseline-relay", true, NULL);
    mosquitto_int_option(mosq, MOSQ_OPT_PROTOCOL_VERSION, MQTT_PROTOCOL_V5);
    mosquitto_int_option(mosq, MOSQ_OPT_TCP_NODELAY, 1);
    mosquitto_int_option(mosq, MOSQ_OPT_RECEIVE_MAXIMUM, 1000);
    mosquitto_int_option(mosq, MOSQ_OPT_SEND_MAXIMUM, 1000);
    mosquitto_connect_v5_callback_set(mosq, on_connect);
    mosquitto_message_v5_callback_set(mosq, on_message);
    if (mosquitto_connect_bind_v5(mosq, "127.0.0.1", atoi(argv[1]), 30, NULL, NULL) != MOSQ_ERR_SUCCESS) {
        fprintf(stderr, "relay: cannot connect\n");
        return 1;
    }
    printf("connected\n");
    fflush(stdout);
    return mosquitto_loop_forever(mosq, -1, 1);
}
