/* sha256.c: SHA-256 from OpenSSL's libcrypto (see sha256.h). The digest
 * functions are used directly rather than through EVP: EVP's provider
 * machinery costs a millisecond at start-up and pulls all of libcrypto
 * into a static link, where SHA256_* pulls in only the hash. */
#define OPENSSL_API_COMPAT 0x10100000L
#include "sha256.h"

#include <openssl/crypto.h>
#include <openssl/sha.h>
#include <stdlib.h>

struct sha256 {
	SHA256_CTX ctx;
};

struct sha256 *sha256_new(void)
{
	struct sha256 *h = malloc(sizeof(*h));

	if (h && SHA256_Init(&h->ctx) != 1) {
		free(h);
		return NULL;
	}
	return h;
}

int sha256_update(struct sha256 *h, const void *data, size_t len)
{
	return SHA256_Update(&h->ctx, data, len) == 1 ? 0 : -1;
}

int sha256_update_field(struct sha256 *h, const void *data, size_t len)
{
	unsigned char be[8];
	uint64_t n = len;

	for (int i = 7; i >= 0; i--) {
		be[i] = (unsigned char)(n & 0xff);
		n >>= 8;
	}
	if (sha256_update(h, be, sizeof(be)) < 0)
		return -1;
	return sha256_update(h, data, len);
}

int sha256_final_hex(struct sha256 *h, char hex[SHA256_HEX_LEN + 1])
{
	static const char digits[] = "0123456789abcdef";
	unsigned char md[SHA256_DIGEST_LENGTH];
	int r = -1;

	if (SHA256_Final(md, &h->ctx) == 1) {
		for (size_t i = 0; i < sizeof(md); i++) {
			hex[2 * i] = digits[md[i] >> 4];
			hex[2 * i + 1] = digits[md[i] & 0xf];
		}
		hex[SHA256_HEX_LEN] = '\0';
		r = 0;
	}
	sha256_free(h);
	return r;
}

void sha256_free(struct sha256 *h)
{
	free(h);
}

int sha256_hex(const void *data, size_t len, char hex[SHA256_HEX_LEN + 1])
{
	struct sha256 *h = sha256_new();

	if (!h)
		return -1;
	if (sha256_update(h, data, len) < 0) {
		sha256_free(h);
		return -1;
	}
	return sha256_final_hex(h, hex);
}

int sha256_raw(const void *data, size_t len, unsigned char out[32])
{
	SHA256_CTX ctx;
	int ok = SHA256_Init(&ctx) == 1 && SHA256_Update(&ctx, data, len) == 1 &&
		 SHA256_Final(out, &ctx) == 1;

	OPENSSL_cleanse(&ctx, sizeof(ctx));
	return ok ? 0 : -1;
}
