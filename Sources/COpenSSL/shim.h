#ifndef COPENSSL_SHIM_H
#define COPENSSL_SHIM_H
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <string.h>
#include <arpa/inet.h>

/* OpenSSL's option and mode setters, ALPN constants and name printing are macros Swift cannot
   call: one typed wrapper each. No logic beyond what a macro expands to, except the ALPN choice
   and the peer-name check both clients share. */

/* TLS 1.2 minimum (1.3 is the default maximum and is negotiated first), no renegotiation, no
   compression, the server's cipher order, buffers released while a connection is idle. */
static inline int COpenSSL_ctx_harden(SSL_CTX *ctx) {
    if (SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1) return 0;
    SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION | SSL_OP_CIPHER_SERVER_PREFERENCE);
    SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS);
    return 1;
}

/* ALPN: "h2" when the client offers it (gRPC), else "adloader/1" when offered (the framed
   protocol), else no protocol agreed (the handshake goes on; the sniffer tells bytes apart). */
static int COpenSSL_alpn_select(SSL *ssl, const unsigned char **out, unsigned char *outlen,
                                const unsigned char *in, unsigned int inlen, void *arg) {
    (void)ssl; (void)arg;
    static const unsigned char preferred[] = "\x02h2\x0a" "adloader/1";
    unsigned char *selected = NULL;
    unsigned char selectedLength = 0;
    if (SSL_select_next_proto(&selected, &selectedLength, preferred, sizeof(preferred) - 1, in, inlen)
        == OPENSSL_NPN_NEGOTIATED) {
        *out = selected;
        *outlen = selectedLength;
        return SSL_TLSEXT_ERR_OK;
    }
    return SSL_TLSEXT_ERR_NOACK;
}
static inline void COpenSSL_ctx_enable_alpn(SSL_CTX *ctx) { SSL_CTX_set_alpn_select_cb(ctx, COpenSSL_alpn_select, NULL); }

/* Client certificates: checked against the CA file; `required` refuses a handshake without one. */
static inline void COpenSSL_ctx_verify_clients(SSL_CTX *ctx, int required) {
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | (required ? SSL_VERIFY_FAIL_IF_NO_PEER_CERT : 0), NULL);
}

/* The peer certificate's subject as RFC 2253 text into `buffer` (NUL-terminated, truncated to
   `capacity`); returns its length, or -1 without a certificate. */
static inline int COpenSSL_peer_subject(SSL *ssl, char *buffer, int capacity) {
    X509 *certificate = SSL_get1_peer_certificate(ssl);
    if (certificate == NULL) return -1;
    BIO *bio = BIO_new(BIO_s_mem());
    int length = -1;
    if (bio != NULL) {
        X509_NAME_print_ex(bio, X509_get_subject_name(certificate), 0, XN_FLAG_RFC2253);
        length = BIO_read(bio, buffer, capacity - 1);
        if (length < 0) length = 0;
        buffer[length] = 0;
        BIO_free(bio);
    }
    X509_free(certificate);
    return length;
}

/* Initialises OpenSSL without its atexit cleanup. Call before the first SSL_CTX_new (the first
   initialisation's flags count; later calls do nothing). OpenSSL's atexit handler frees its global
   state while other threads may still be inside SSL_read (the client's reader thread when the CLI
   exits), which corrupted the heap ("malloc_consolidate(): unaligned fastbin chunk detected" in
   test_tls.py, ci run of 2026-12-02); a process that exits needs no cleanup. */
static inline int COpenSSL_init_without_atexit(void) {
    return OPENSSL_init_ssl(OPENSSL_INIT_NO_ATEXIT, NULL);
}

/* The oldest queued OpenSSL error as text (and the queue emptied); 0 when none. */
static inline unsigned long COpenSSL_take_error(char *buffer, size_t capacity) {
    unsigned long first = ERR_get_error();
    if (first != 0) ERR_error_string_n(first, buffer, capacity);
    else if (capacity > 0) buffer[0] = 0;
    ERR_clear_error();
    return first;
}

/* The client side (AdLoaderClient): TLS 1.2 minimum, no renegotiation, no compression, the
   server's certificate verified against the trust store; the server name sent (SNI). */
static inline int COpenSSL_client_ctx_harden(SSL_CTX *ctx) {
    if (SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1) return 0;
    SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION);
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
    return 1;
}
static inline int COpenSSL_set_server_name(SSL *ssl, const char *name) { return (int)SSL_set_tlsext_host_name(ssl, name); }

/* The peer's certificate must carry `name`: an IP literal in its IP subject alternative names,
 * else a DNS name (also sent as SNI). For both clients (the Swift client library and the
 * daemon's Redis connections). 1 on success, 0 when the name could not be set. */
static inline int COpenSSL_expect_peer_name(SSL *ssl, const char *name) {
    unsigned char address[16];
    if (inet_pton(AF_INET, name, address) == 1 || inet_pton(AF_INET6, name, address) == 1)
        return X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), name) == 1;
    return SSL_set_tlsext_host_name(ssl, name) == 1 && SSL_set1_host(ssl, name) == 1;
}

static inline int COpenSSL_ssl_is_init_finished(const SSL *ssl) { return SSL_is_init_finished(ssl); }
static inline const char *COpenSSL_cipher_name(const SSL *ssl) { return SSL_CIPHER_get_name(SSL_get_current_cipher(ssl)); }
#endif
