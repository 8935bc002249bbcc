/* sha256.h: SHA-256 through OpenSSL's libcrypto, incremental, hex out. */
#ifndef CORDON_LIB_SHA256_H
#define CORDON_LIB_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define SHA256_HEX_LEN 64

struct sha256;

struct sha256 *sha256_new(void);
int sha256_update(struct sha256 *h, const void *data, size_t len);
/* Length-prefixed field: 8-byte big-endian length, then the bytes. */
int sha256_update_field(struct sha256 *h, const void *data, size_t len);
/* Writes 64 hex digits and a NUL into hex; frees h. */
int sha256_final_hex(struct sha256 *h, char hex[SHA256_HEX_LEN + 1]);
void sha256_free(struct sha256 *h);

int sha256_hex(const void *data, size_t len, char hex[SHA256_HEX_LEN + 1]);
/* The 32-byte digest of data; 0, or -1 on failure. */
int sha256_raw(const void *data, size_t len, unsigned char out[32]);

#endif
