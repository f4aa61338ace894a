#ifndef MISHAP_CGNUTLS_H
#define MISHAP_CGNUTLS_H

// GnuTLS, which libmicrohttpd serves HTTPS with, also makes Mishap's certificates: a local
// certificate authority, the server's certificate, and the TLS failure catalogue's.
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <gnutls/crypto.h>

/// gnutls_free is a macro over a function pointer, which Swift cannot call as written.
static inline void mishap_gnutls_free(void *pointer) {
    gnutls_free(pointer);
}

/// GNUTLS_CURVE_TO_BITS, a macro: the `bits` argument of gnutls_x509_privkey_generate that
/// asks for a given elliptic curve.
static inline unsigned int mishap_gnutls_curve_bits(gnutls_ecc_curve_t curve) {
    return GNUTLS_CURVE_TO_BITS(curve);
}

#endif
