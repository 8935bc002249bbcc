/* socks5.h: the gateway's SOCKS5 parser (RFC 1928): the no-authentication
 * method, or the username/password method (RFC 1929) when the gateway has
 * a proxy token; CONNECT to a name, IPv4 or IPv6 address. BIND and UDP
 * ASSOCIATE are refused with "command not supported"; anything that is
 * not SOCKS5 (SOCKS4 included) is refused. Pure functions over a buffer. */
#ifndef CORDON_GATEWAY_SOCKS5_H
#define CORDON_GATEWAY_SOCKS5_H

#include <stddef.h>
#include <stdint.h>

enum socks_result { SOCKS_NEED_MORE, SOCKS_OK, SOCKS_BAD };

/* Reply codes (RFC 1928 section 6). */
enum socks_reply {
	SOCKS_SUCCEEDED = 0x00,
	SOCKS_GENERAL_FAILURE = 0x01,
	SOCKS_NOT_ALLOWED = 0x02,	/* connection not allowed by ruleset */
	SOCKS_NET_UNREACHABLE = 0x03,
	SOCKS_HOST_UNREACHABLE = 0x04,
	SOCKS_CONN_REFUSED = 0x05,
	SOCKS_TTL_EXPIRED = 0x06,
	SOCKS_CMD_UNSUPPORTED = 0x07,
	SOCKS_ATYP_UNSUPPORTED = 0x08,
};

/* Authentication methods (RFC 1928 section 3). */
#define SOCKS_METHOD_NONE 0x00
#define SOCKS_METHOD_USERPASS 0x02	/* RFC 1929 */
#define SOCKS_METHOD_REFUSED 0xff	/* no acceptable method */

/* Greeting: VER=5, NMETHODS, METHODS; the client must offer method (the
 * one method the gateway takes: SOCKS_METHOD_NONE, or
 * SOCKS_METHOD_USERPASS when it has a token). On SOCKS_OK *used is its
 * length and the answer is {5, method}; on SOCKS_BAD answer
 * {5, SOCKS_METHOD_REFUSED} when the version was 5, else just close. */
enum socks_result socks5_parse_greeting(const uint8_t *buf, size_t len,
					uint8_t method, size_t *used,
					const char **reason);

/* The username/password sub-negotiation (RFC 1929): VER=1, ULEN, UNAME,
 * PLEN, PASSWD. On SOCKS_OK the spans point into buf (lengths 0 to 255;
 * RFC 1929 asks for at least 1, but an empty user name is taken: the
 * gateway judges the password alone) and used is the message's length.
 * On SOCKS_BAD (a version other than 1) answer {1, 1} and close. Nothing
 * past len is read; SOCKS_NEED_MORE while bytes are missing. */
struct socks_auth {
	const uint8_t *user, *password;
	size_t user_len, password_len;
	size_t used;
	const char *reason;		/* SOCKS_BAD: fixed text */
};

enum socks_result socks5_parse_auth(const uint8_t *buf, size_t len,
				    struct socks_auth *auth);

/* The sub-negotiation's 2-byte answer: {1, 0} granted, {1, 1} refused. */
size_t socks5_format_auth_reply(uint8_t out[2], int granted);

#define SOCKS_HOST_MAX 255

struct socks_request {
	char host[SOCKS_HOST_MAX + 1];	/* a name, or an IP literal's text */
	int is_ip;			/* 4 or 6 for literals, 0 for a name */
	uint16_t port;
	size_t used;			/* bytes the request took */
	enum socks_reply reply;		/* SOCKS_BAD: the code to answer */
	const char *reason;		/* SOCKS_BAD: fixed text */
};

/* Request: VER=5, CMD, RSV=0, ATYP, DST.ADDR, DST.PORT. req is
 * overwritten. Names with NUL, space or non-printable bytes, empty
 * names, port 0, RSV != 0 and versions other than 5 are refused with
 * SOCKS_GENERAL_FAILURE; every command but CONNECT (BIND, UDP ASSOCIATE
 * included) with SOCKS_CMD_UNSUPPORTED; unknown address types with
 * SOCKS_ATYP_UNSUPPORTED. Names are lower-cased, one trailing dot
 * removed; a name that is an IPv4 dotted quad or an IPv6 address is
 * taken as that literal (is_ip 4 or 6), written by inet_ntop like
 * ATYP 1 and 4 addresses. Fields are checked as they arrive;
 * SOCKS_NEED_MORE while bytes are missing, nothing past len is read. */
enum socks_result socks5_parse_request(const uint8_t *buf, size_t len,
				       struct socks_request *req);

/* The 10-byte reply with an IPv4 bound address of 0.0.0.0:0. */
size_t socks5_format_reply(uint8_t out[10], enum socks_reply code);

#endif
