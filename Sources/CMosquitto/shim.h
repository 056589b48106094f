#ifndef TRELLIS_CMOSQUITTO_SHIM_H
#define TRELLIS_CMOSQUITTO_SHIM_H

#include <mosquitto.h>
#include <mqtt_protocol.h>

/* The three OpenSSL functions Trellis asks (libssl and libcrypto, which libmosquitto uses too),
   declared here rather than importing OpenSSL's headers into Swift. */
typedef struct ssl_st SSL;
long SSL_get_verify_result(const SSL *ssl);
const char *X509_verify_cert_error_string(long n);
const char *X509_get_default_cert_dir(void);

/* What OpenSSL concluded about the broker's certificate on the client's current TLS session:
   X509_V_OK, or why verification failed; -1 when there is no TLS session. libmosquitto keeps the
   session until it closes the socket, so this can be asked from its log callback while it
   reports a failed handshake. */
static inline long trellis_tls_verify_result(struct mosquitto *mosq) {
    SSL *ssl = (SSL *)mosquitto_ssl_get(mosq);
    return ssl ? SSL_get_verify_result(ssl) : -1;
}

/* OpenSSL's sentence for a certificate verification result. */
static inline const char *trellis_tls_verify_text(long code) {
    return X509_verify_cert_error_string(code);
}

/* The directory of the system's CA certificates that OpenSSL was built to use. */
static inline const char *trellis_tls_default_ca_directory(void) {
    return X509_get_default_cert_dir();
}

#endif
