#include <openssl/evp.h>
#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#include <openssl/bn.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/x509_vfy.h>
#include <openssl/err.h>
#include <openssl/sha.h>
#include <openssl/rand.h>
#include <openssl/bio.h>
#include <openssl/objects.h>
#include <openssl/asn1.h>
#include <openssl/ssl.h>

// OpenSSL spells these as macros (or variadic functions), which Swift cannot call; each gets a
// fixed-signature inline wrapper here.

static inline STACK_OF(X509) *shim_sk_X509_new_null(void) { return sk_X509_new_null(); }
static inline int shim_sk_X509_push(STACK_OF(X509) *stack, X509 *cert) { return sk_X509_push(stack, cert); }
static inline int shim_sk_X509_num(const STACK_OF(X509) *stack) { return sk_X509_num(stack); }
static inline X509 *shim_sk_X509_value(const STACK_OF(X509) *stack, int index) { return sk_X509_value(stack, index); }
// Frees the stack only; the certificates stay owned by their Swift wrappers.
static inline void shim_sk_X509_free(STACK_OF(X509) *stack) { sk_X509_free(stack); }
// Frees the stack and drops one reference on each certificate (for X509_STORE_CTX_get1_chain).
static inline void shim_sk_X509_pop_free(STACK_OF(X509) *stack) { sk_X509_pop_free(stack, X509_free); }

static inline EVP_PKEY *shim_generate_p256(void) { return EVP_EC_gen("P-256"); }

static inline long shim_BIO_get_mem_data(BIO *bio, char **data) { return BIO_get_mem_data(bio, data); }

static inline void shim_OPENSSL_free(void *pointer) { OPENSSL_free(pointer); }

static inline unsigned long shim_XN_FLAG_RFC2253(void) { return XN_FLAG_RFC2253; }

// SHA-256 through the low-level interface, deprecated in OpenSSL 3 but kept until 4: its state is a
// plain struct, so hashing a short input allocates nothing (EVP_Digest makes and frees two contexts)
// and a state can be copied and resumed (a verified JWS header is hashed once, not per request).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
static inline void shim_SHA256_Init(SHA256_CTX *context) { SHA256_Init(context); }
static inline void shim_SHA256_Update(SHA256_CTX *context, const void *data, size_t count) { SHA256_Update(context, data, count); }
static inline void shim_SHA256_Final(unsigned char *digest, SHA256_CTX *context) { SHA256_Final(digest, context); }
#pragma GCC diagnostic pop

// A table of multiples of a group's generator, deprecated in OpenSSL 3 but kept until 4: a copy of
// P-256 whose generator is a public key that signs many messages verifies them without the
// variable-point multiplication that dominates ECDSA verification.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
static inline int shim_EC_GROUP_precompute_mult(EC_GROUP *group, BN_CTX *context) { return EC_GROUP_precompute_mult(group, context); }
#pragma GCC diagnostic pop

static inline int shim_SSL_CTX_set_min_proto_version(SSL_CTX *context, int version) { return SSL_CTX_set_min_proto_version(context, version); }
static inline int shim_SSL_CTX_set_max_proto_version(SSL_CTX *context, int version) { return SSL_CTX_set_max_proto_version(context, version); }
static inline int shim_TLS1_2_VERSION(void) { return TLS1_2_VERSION; }
static inline int shim_TLS1_3_VERSION(void) { return TLS1_3_VERSION; }
static inline uint64_t shim_SSL_server_options(void) {
    return SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE | SSL_OP_NO_COMPRESSION;
}
// A non-blocking session retries a write with the same bytes from a buffer that may have moved.
static inline long shim_SSL_set_nonblocking_modes(SSL *ssl) {
    return SSL_set_mode(ssl, SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER | SSL_MODE_ENABLE_PARTIAL_WRITE);
}
