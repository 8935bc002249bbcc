/* socks5.c: the gateway's SOCKS5 parser (see socks5.h; RFC 1928).
 *
 * Each field is checked as soon as its bytes are there, so a wrong
 * version or command is refused at once; nothing past len is ever read,
 * and a buffer that stops short of a field is SOCKS_NEED_MORE. Reasons
 * are fixed strings: nothing of the input is copied into one. */
#include "gateway/socks5.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>

#define SOCKS_VERSION 5
#define SOCKS_AUTH_VERSION 1
#define SOCKS_CMD_CONNECT 1
#define SOCKS_ATYP_IPV4 1
#define SOCKS_ATYP_NAME 3
#define SOCKS_ATYP_IPV6 4

enum socks_result socks5_parse_greeting(const uint8_t *buf, size_t len,
					uint8_t method, size_t *used,
					const char **reason)
{
	size_t n;

	*used = 0;
	*reason = NULL;
	if (len < 1)
		return SOCKS_NEED_MORE;
	if (buf[0] != SOCKS_VERSION) {
		*reason = "not a SOCKS5 greeting";
		return SOCKS_BAD;
	}
	if (len < 2)
		return SOCKS_NEED_MORE;
	n = buf[1];
	if (n == 0) {
		*reason = "SOCKS5 greeting offers no method";
		return SOCKS_BAD;
	}
	if (len < 2 + n)
		return SOCKS_NEED_MORE;
	if (!memchr(buf + 2, method, n)) {
		*reason = method == SOCKS_METHOD_USERPASS
				  ? "SOCKS5 client does not offer username/password"
				  : "SOCKS5 client does not offer no-authentication";
		return SOCKS_BAD;
	}
	*used = 2 + n;
	return SOCKS_OK;
}

enum socks_result socks5_parse_auth(const uint8_t *buf, size_t len,
				    struct socks_auth *auth)
{
	size_t ulen, plen;

	memset(auth, 0, sizeof(*auth));
	if (len < 1)
		return SOCKS_NEED_MORE;
	if (buf[0] != SOCKS_AUTH_VERSION) {
		auth->reason = "not a SOCKS5 username/password message";
		return SOCKS_BAD;
	}
	if (len < 2)
		return SOCKS_NEED_MORE;
	ulen = buf[1];
	if (len < 2 + ulen + 1)
		return SOCKS_NEED_MORE;
	plen = buf[2 + ulen];
	if (len < 3 + ulen + plen)
		return SOCKS_NEED_MORE;
	auth->user = buf + 2;
	auth->user_len = ulen;
	auth->password = buf + 3 + ulen;
	auth->password_len = plen;
	auth->used = 3 + ulen + plen;
	return SOCKS_OK;
}

size_t socks5_format_auth_reply(uint8_t out[2], int granted)
{
	out[0] = SOCKS_AUTH_VERSION;
	out[1] = granted ? 0 : 1;
	return 2;
}

static enum socks_result refuse(struct socks_request *req,
				enum socks_reply code, const char *reason)
{
	req->reply = code;
	req->reason = reason;
	return SOCKS_BAD;
}

/* A name from the wire: printable ASCII without spaces, lower-cased, one
 * trailing dot removed. A name that is an IP literal's text is taken as
 * that literal, so a literal is judged the same way whichever address
 * type carried it. */
static enum socks_result take_name(const uint8_t *p, size_t n,
				   struct socks_request *req)
{
	struct in6_addr a6;
	struct in_addr a4;

	for (size_t i = 0; i < n; i++)
		if (p[i] <= 0x20 || p[i] >= 0x7f)
			return refuse(req, SOCKS_GENERAL_FAILURE,
				      "bad byte in the SOCKS5 host name");
	if (n > 0 && p[n - 1] == '.')
		n--;
	if (n == 0)
		return refuse(req, SOCKS_GENERAL_FAILURE, "empty SOCKS5 host name");
	for (size_t i = 0; i < n; i++)
		req->host[i] = (char)(p[i] >= 'A' && p[i] <= 'Z' ? p[i] - 'A' + 'a'
								: p[i]);
	req->host[n] = '\0';
	/* inet_pton(AF_INET) takes dotted quads only, never "127.1" or hex. */
	if (inet_pton(AF_INET, req->host, &a4) == 1) {
		req->is_ip = 4;
		inet_ntop(AF_INET, &a4, req->host, sizeof(req->host));
	} else if (inet_pton(AF_INET6, req->host, &a6) == 1) {
		req->is_ip = 6;
		inet_ntop(AF_INET6, &a6, req->host, sizeof(req->host));
	}
	return SOCKS_OK;
}

enum socks_result socks5_parse_request(const uint8_t *buf, size_t len,
				       struct socks_request *req)
{
	size_t addr_off = 4, addr_len, need;
	enum socks_result r;

	memset(req, 0, sizeof(*req));
	if (len < 1)
		return SOCKS_NEED_MORE;
	if (buf[0] != SOCKS_VERSION)
		return refuse(req, SOCKS_GENERAL_FAILURE, "not a SOCKS5 request");
	if (len < 2)
		return SOCKS_NEED_MORE;
	if (buf[1] != SOCKS_CMD_CONNECT)
		return refuse(req, SOCKS_CMD_UNSUPPORTED,
			      "SOCKS5 command not supported (CONNECT only)");
	if (len < 3)
		return SOCKS_NEED_MORE;
	if (buf[2] != 0)
		return refuse(req, SOCKS_GENERAL_FAILURE,
			      "SOCKS5 reserved byte is not zero");
	if (len < 4)
		return SOCKS_NEED_MORE;
	switch (buf[3]) {
	case SOCKS_ATYP_IPV4:
		addr_len = 4;
		break;
	case SOCKS_ATYP_IPV6:
		addr_len = 16;
		break;
	case SOCKS_ATYP_NAME:
		if (len < 5)
			return SOCKS_NEED_MORE;
		addr_off = 5;
		addr_len = buf[4];
		if (addr_len == 0)
			return refuse(req, SOCKS_GENERAL_FAILURE,
				      "empty SOCKS5 host name");
		break;
	default:
		return refuse(req, SOCKS_ATYP_UNSUPPORTED,
			      "SOCKS5 address type not supported");
	}
	need = addr_off + addr_len + 2;
	if (len < need)
		return SOCKS_NEED_MORE;
	if (buf[3] == SOCKS_ATYP_IPV4) {
		struct in_addr a4;

		memcpy(&a4, buf + addr_off, sizeof(a4));
		req->is_ip = 4;
		inet_ntop(AF_INET, &a4, req->host, sizeof(req->host));
	} else if (buf[3] == SOCKS_ATYP_IPV6) {
		struct in6_addr a6;

		memcpy(&a6, buf + addr_off, sizeof(a6));
		req->is_ip = 6;
		inet_ntop(AF_INET6, &a6, req->host, sizeof(req->host));
	} else {
		r = take_name(buf + addr_off, addr_len, req);
		if (r != SOCKS_OK)
			return r;
	}
	req->port = (uint16_t)((unsigned)buf[need - 2] << 8 | buf[need - 1]);
	if (req->port == 0)
		return refuse(req, SOCKS_GENERAL_FAILURE, "SOCKS5 port is zero");
	req->used = need;
	return SOCKS_OK;
}

size_t socks5_format_reply(uint8_t out[10], enum socks_reply code)
{
	static const uint8_t tail[8] = { 0, 1, 0, 0, 0, 0, 0, 0 };

	out[0] = SOCKS_VERSION;
	out[1] = (uint8_t)code;
	memcpy(out + 2, tail, sizeof(tail));
	return 10;
}
