/* sha256.c: SHA-256 over libcrypto's EVP interface (see sha256.h). */
#include "sha256.h"

#include <stdlib.h>

#include <openssl/evp.h>

struct sha256 {
	EVP_MD_CTX *ctx;
};

struct sha256 *sha256_new(void)
{
	struct sha256 *h = malloc(sizeof(*h));

	if (!h)
		return NULL;
	h->ctx = EVP_MD_CTX_new();
	if (!h->ctx || EVP_DigestInit_ex(h->ctx, EVP_sha256(), NULL) != 1) {
		sha256_free(h);
		return NULL;
	}
	return h;
}

int sha256_update(struct sha256 *h, const void *data, size_t len)
{
	return EVP_DigestUpdate(h->ctx, data, len) == 1 ? 0 : -1;
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
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	int r = -1;

	if (EVP_DigestFinal_ex(h->ctx, md, &mdlen) == 1 && mdlen == 32) {
		for (unsigned int i = 0; i < mdlen; i++) {
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
	if (!h)
		return;
	EVP_MD_CTX_free(h->ctx);
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
