/*
 * The benchmark's C load generator, used to check whether the Swift client limits the figures, and to
 * drive both relays when it does. One thread, one connection, libmosquitto's own loop.
 *
 *   loadgen PORT MODE QOS COUNT WINDOW PREFIX [SUFFIX [SAMPLES]]
 *     MODE req: COUNT requests on PREFIX/torpi, WINDOW in flight, replies read on PREFIX/fromrpi; a reply
 *               must end with SUFFIX (e.g. operation:RES_plantSensorData). Prints
 *               `rate=<req/s> p50=<µs> p99=<µs> max=<µs> bad=<n>` (latencies of each round trip) and, with
 *               SAMPLES, writes each round trip to that file in µs, one per line, in the order the replies came.
 *     MODE fan: COUNT presses of PREFIX/buttons/b0/press, WINDOW presses unanswered, each delivered to 100
 *               clients on PREFIX/clients/+/button-press. Prints `rate=<presses/s> deliveries=<n>`.
 * Stops by itself: exits 3 when nothing arrives for 30 s.
 */
#include <mosquitto.h>
#include <mqtt_protocol.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int qos, count, window, fan, sent, received, bad, good, subscribed;
static const char *suffix = "", *samples_path;
static char request_topic[64], reply_filter[64];
static double *latency, *start_of, begin, last_progress;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static void send_one(struct mosquitto *mosq) {
    if (fan) {
        mosquitto_publish_v5(mosq, NULL, request_topic, 0, "", 1, false, NULL);
    } else {
        char payload[160];
        int length = snprintf(payload, sizeof payload,
                              "ID:%d;sender:bench;receiver:Host-RPI3B+;payload:all;operation:REQ_plantSensorData", sent);
        start_of[sent] = now();
        mosquitto_publish_v5(mosq, NULL, request_topic, length, payload, qos, false, NULL);
    }
    sent++;
}

static void on_subscribe(struct mosquitto *mosq, void *obj, int mid, int n, const int *granted, const mosquitto_property *p) {
    (void)obj; (void)mid; (void)n; (void)granted; (void)p;
    subscribed = 1;
    begin = last_progress = now();
    while (sent < window && sent < count) send_one(mosq);
}

static void on_connect(struct mosquitto *mosq, void *obj, int rc, int flags, const mosquitto_property *p) {
    (void)obj; (void)flags; (void)p;
    if (rc != 0) { fprintf(stderr, "loadgen: connect refused %d\n", rc); exit(1); }
    mosquitto_subscribe_v5(mosq, NULL, reply_filter, 1, 0, NULL);
}

static void on_message(struct mosquitto *mosq, void *obj, const struct mosquitto_message *m, const mosquitto_property *p) {
    (void)obj; (void)p;
    last_progress = now();
    if (fan) {
        received++;
        if (received % 100 == 0 && sent < count) send_one(mosq);
        return;
    }
    /* The reply's ID is the request's index: the latency is exact even if replies overtake. */
    int id = -1;
    if (m->payloadlen > 3 && memcmp(m->payload, "ID:", 3) == 0) id = atoi((const char *)m->payload + 3);
    size_t n = strlen(suffix);
    if (id < 0 || id >= sent || (size_t)m->payloadlen < n || memcmp((const char *)m->payload + m->payloadlen - n, suffix, n) != 0) {
        bad++;
    } else {
        latency[good++] = (last_progress - start_of[id]) * 1e6;
    }
    received++;
    if (sent < count) send_one(mosq);
}

static int compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    if (argc < 7) { fprintf(stderr, "usage: loadgen PORT req|fan QOS COUNT WINDOW PREFIX [SUFFIX [SAMPLES]]\n"); return 2; }
    fan = strcmp(argv[2], "fan") == 0;
    qos = atoi(argv[3]); count = atoi(argv[4]); window = atoi(argv[5]);
    snprintf(request_topic, sizeof request_topic, fan ? "%s/buttons/b0/press" : "%s/torpi", argv[6]);
    snprintf(reply_filter, sizeof reply_filter, fan ? "%s/clients/+/button-press" : "%s/fromrpi", argv[6]);
    if (argc > 7) suffix = argv[7];
    if (argc > 8) samples_path = argv[8];
    latency = calloc(count + 1, sizeof *latency);
    start_of = calloc(count + 1, sizeof *start_of);
    int expected = fan ? count * 100 : count;

    mosquitto_lib_init();
    struct mosquitto *mosq = mosquitto_new(NULL, true, NULL);
    mosquitto_int_option(mosq, MOSQ_OPT_PROTOCOL_VERSION, MQTT_PROTOCOL_V5);
    mosquitto_int_option(mosq, MOSQ_OPT_TCP_NODELAY, 1);
    mosquitto_int_option(mosq, MOSQ_OPT_RECEIVE_MAXIMUM, 65535);
    mosquitto_int_option(mosq, MOSQ_OPT_SEND_MAXIMUM, 65535);
    mosquitto_connect_v5_callback_set(mosq, on_connect);
    mosquitto_subscribe_v5_callback_set(mosq, on_subscribe);
    mosquitto_message_v5_callback_set(mosq, on_message);
    if (mosquitto_connect_bind_v5(mosq, "127.0.0.1", atoi(argv[1]), 30, NULL, NULL) != MOSQ_ERR_SUCCESS) {
        fprintf(stderr, "loadgen: cannot connect\n");
        return 1;
    }
    last_progress = now();
    while (received < expected) {
        if (mosquitto_loop(mosq, 100, 1) != MOSQ_ERR_SUCCESS) { fprintf(stderr, "loadgen: connection lost\n"); return 1; }
        if (now() - last_progress > 30) { fprintf(stderr, "loadgen: stalled at %d of %d\n", received, expected); return 3; }
    }
    double seconds = now() - begin;
    if (fan) {
        printf("rate=%.1f deliveries=%d\n", count / seconds, received);
    } else {
        if (samples_path) {
            FILE *out = fopen(samples_path, "w");
            if (!out) { fprintf(stderr, "loadgen: cannot write %s\n", samples_path); return 1; }
            for (int i = 0; i < good; i++) fprintf(out, "%.1f\n", latency[i]);
            if (ferror(out) | fclose(out)) { fprintf(stderr, "loadgen: cannot write %s\n", samples_path); return 1; }
        }
        qsort(latency, good, sizeof *latency, compare);
        double p50 = good ? latency[(int)(good * 0.5)] : 0, p99 = good ? latency[(int)(good * 0.99)] : 0;
        printf("rate=%.1f p50=%.1f p99=%.1f max=%.1f bad=%d\n", count / seconds, p50, p99, good ? latency[good - 1] : 0, bad);
    }
    mosquitto_disconnect(mosq);
    mosquitto_destroy(mosq);
    return 0;
}
