/* target.c: the remote and host key of an SSH container config (see
 * target.h). Everything here ends on ssh's command line or in a
 * known_hosts line, so what is let through is narrow: a host name or
 * address, a user name, a key type from a fixed list and base64 that
 * decodes to a blob of that type. */
#include "container/ssh/target.h"

#include "lib/cleanup.h"

#include <errno.h>
#include <openssl/evp.h>
#include <openssl/sha.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define KEY_B64_MAX 16384

static const char *const key_types[] = {
	"ssh-ed25519",	       "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384",
	"ecdsa-sha2-nistp521", "ssh-rsa",	      NULL,
};

static bool word_ok(const char *s, size_t n, const char *extra)
{
	if (n == 0 || s[0] == '-')
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      strchr(extra, c)))
			return false;
	}
	return true;
}

int ssh_target_remote(struct ssh_target *t, const char *remote, const char *where,
		      struct err **e)
{
	const char *at = strchr(remote, '@'), *h, *colon;
	size_t hn;

	if (!at || at == remote || at - remote > 64 || !word_ok(remote, (size_t)(at - remote), "._-"))
		return err_set(e, ERR_CONFIG, 0,
			       "%s: must be user@host or user@host:port (a user name of letters, "
			       "digits, '.', '_' and '-')",
			       where);
	h = at + 1;
	t->port = 22;
	if (*h == '[') { /* an IPv6 address */
		const char *close = strchr(h, ']');

		if (!close || !word_ok(h + 1, (size_t)(close - h - 1), ":.") ||
		    (close[1] && close[1] != ':'))
			return err_set(e, ERR_CONFIG, 0, "%s: [address] must be an IPv6 address", where);
		colon = close[1] ? close + 1 : NULL;
		hn = (size_t)(close - h - 1);
		h++;
	} else {
		colon = strchr(h, ':');
		hn = colon ? (size_t)(colon - h) : strlen(h);
		if (hn > 253 || !word_ok(h, hn, ".-"))
			return err_set(e, ERR_CONFIG, 0,
				       "%s: the host must be a name or address (letters, digits, "
				       "'.' and '-')",
				       where);
	}
	if (colon) {
		char *end = NULL;
		unsigned long p;

		errno = 0;
		p = strtoul(colon + 1, &end, 10);
		if (!colon[1] || *end || errno || p < 1 || p > 65535 || colon[1] == '+' ||
		    colon[1] == '-')
			return err_set(e, ERR_CONFIG, 0, "%s: the port must be 1-65535", where);
		t->port = (unsigned int)p;
	}
	free(t->user);
	free(t->host);
	t->user = strndup(remote, (size_t)(at - remote));
	t->host = strndup(h, hn);
	if (!t->user || !t->host)
		return err_set(e, ERR_INTERNAL, ENOMEM, "%s", where);
	return 0;
}

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

int ssh_target_key(struct ssh_target *t, const char *line, const char *where, struct err **e)
{
	const char *sp = strchr(line, ' '), *b64, *end;
	_cleanup_free_ unsigned char *blob = NULL;
	unsigned char md[SHA256_DIGEST_LENGTH];
	unsigned char fp[64];
	const char *type = NULL;
	size_t tn, bn;
	int n;

	if (!sp)
		return err_set(e, ERR_CONFIG, 0,
			       "%s: must be a public key line: \"<type> <base64>\", as the remote's "
			       "/etc/ssh/ssh_host_*_key.pub has it",
			       where);
	tn = (size_t)(sp - line);
	for (size_t i = 0; key_types[i]; i++)
		if (strlen(key_types[i]) == tn && strncmp(line, key_types[i], tn) == 0)
			type = key_types[i];
	if (!type)
		return err_set(e, ERR_CONFIG, 0,
			       "%s: the key type must be ssh-ed25519, ecdsa-sha2-nistp256/384/521 or "
			       "ssh-rsa",
			       where);
	b64 = sp + 1;
	end = strchr(b64, ' ');
	bn = end ? (size_t)(end - b64) : strlen(b64);
	if (bn == 0 || bn % 4 || bn > KEY_B64_MAX || !word_ok(b64, bn, "+/="))
		return err_set(e, ERR_CONFIG, 0, "%s: the key is not base64", where);
	for (const char *c = end; c && *c; c++)
		if ((unsigned char)*c < ' ' || *c == 0x7f)
			return err_set(e, ERR_CONFIG, 0, "%s: a control character in the comment",
				       where);
	if (!(blob = malloc(bn)))
		return err_set(e, ERR_INTERNAL, ENOMEM, "%s", where);
	n = EVP_DecodeBlock(blob, (const unsigned char *)b64, (int)bn);
	if (n < 0)
		return err_set(e, ERR_CONFIG, 0, "%s: the key is not base64", where);
	/* EVP_DecodeBlock counts the padding's bytes too */
	for (size_t i = bn; i > 0 && b64[i - 1] == '='; i--)
		n--;
	/* the blob names its own type: string(type) first */
	if (n < 4 || be32(blob) != tn || (size_t)n < 4 + tn || memcmp(blob + 4, type, tn) != 0)
		return err_set(e, ERR_CONFIG, 0, "%s: the key's blob is not a %s key", where, type);
	SHA256(blob, (size_t)n, md);
	snprintf(t->alias, sizeof(t->alias), "cordon-");
	for (int i = 0; i < 8; i++)
		snprintf(t->alias + 7 + (size_t)2 * (size_t)i, 3, "%02x", md[i]);
	EVP_EncodeBlock(fp, md, (int)sizeof(md));
	/* ssh prints it unpadded */
	char *eq = strchr((char *)fp, '=');
	if (eq)
		*eq = '\0';
	snprintf(t->fingerprint, sizeof(t->fingerprint), "SHA256:%s", (char *)fp);
	free(t->key_type);
	free(t->key_b64);
	t->key_type = strdup(type);
	t->key_b64 = strndup(b64, bn);
	if (!t->key_type || !t->key_b64)
		return err_set(e, ERR_INTERNAL, ENOMEM, "%s", where);
	return 0;
}

int ssh_target_from(struct ssh_target *t, const json_t *config, struct err **e)
{
	const char *remote = json_string_value(json_object_get(config, "remote"));
	const char *key = json_string_value(json_object_get(config, "host_key"));

	if (!remote || !key)
		return err_set(e, ERR_CONFIG, 0, "container: an ssh remote needs remote and host_key");
	if (ssh_target_remote(t, remote, "container.remote", e) < 0 ||
	    ssh_target_key(t, key, "container.host_key", e) < 0) {
		ssh_target_clear(t);
		return -1;
	}
	return 0;
}

void ssh_target_clear(struct ssh_target *t)
{
	free(t->user);
	free(t->host);
	free(t->key_type);
	free(t->key_b64);
	t->user = t->host = t->key_type = t->key_b64 = NULL;
}

bool ssh_target_same_account(const struct ssh_target *a, const struct ssh_target *b)
{
	if (!a->user || !b->user || strcmp(a->user, b->user) != 0)
		return false;
	if (a->key_b64 && b->key_b64 && strcmp(a->key_b64, b->key_b64) == 0)
		return true;
	return a->host && b->host && strcasecmp(a->host, b->host) == 0 && a->port == b->port;
}

static bool isolation_none(const json_t *c)
{
	const char *iso = json_string_value(json_object_get(c, "isolation"));

	return iso && strcmp(iso, "none") == 0;
}

int sshcfg_accounts_check(const json_t *containers, const char *const *names, struct err **e)
{
	size_t n = json_array_size(containers);

	for (size_t i = 0; i < n; i++) {
		if (!isolation_none(json_array_get(containers, i)))
			continue;
		struct ssh_target a = { 0 };

		if (ssh_target_from(&a, json_array_get(containers, i), e) < 0)
			return -1;
		for (size_t j = 0; j < n; j++) {
			struct ssh_target b = { 0 };
			bool same;

			if (j == i)
				continue;
			if (ssh_target_from(&b, json_array_get(containers, j), e) < 0) {
				ssh_target_clear(&a);
				return -1;
			}
			same = ssh_target_same_account(&a, &b);
			ssh_target_clear(&b);
			if (same) {
				int r = err_set(e, ERR_CONFIG, 0,
						"bindings.%s.container.remote: the account `%s@%s` runs "
						"isolation none work, which can do anything there: it "
						"is not shared with binding `%s` (give each its own "
						"account)",
						names[i], a.user, a.host, names[j]);
				ssh_target_clear(&a);
				return r;
			}
		}
		ssh_target_clear(&a);
	}
	return 0;
}
