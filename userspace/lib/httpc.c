// SPDX-License-Identifier: GPL-2.0
/* A minimal HTTP/1.0 client for plain http:// to an IPv4 address: tidemarkd
 * pushes its report with it, tidemarkctl status reads the report. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "httpc.h"

int tm_http_parse_url(const char *url, char *addr, size_t addrlen, uint16_t *port, char *path,
		      size_t pathlen)
{
	const char *h, *slash, *colon;
	char *end;
	unsigned long p = 80;
	struct in_addr ia;
	size_t hl;

	if (strncmp(url, "http://", 7))
		return -1;
	h = url + 7;
	slash = strchr(h, '/');
	hl = slash ? (size_t)(slash - h) : strlen(h);
	colon = memchr(h, ':', hl);
	if (colon) {
		p = strtoul(colon + 1, &end, 10);
		if (end != h + hl || p < 1 || p > 65535)
			return -1;
		hl = colon - h;
	}
	if (hl == 0 || hl >= addrlen)
		return -1;
	memcpy(addr, h, hl);
	addr[hl] = 0;
	if (inet_pton(AF_INET, addr, &ia) != 1)
		return -1;
	snprintf(path, pathlen, "%s", slash ? slash : "/");
	*port = p;
	return 0;
}

int tm_http_request(const char *addr, uint16_t port, const char *method, const char *path,
		    const char *body, unsigned int timeout_ms, char **resp, int *status, char *err,
		    size_t errlen)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
	struct timeval tv = {timeout_ms / 1000, (timeout_ms % 1000) * 1000};
	size_t len = 0, cap = 0, bl = body ? strlen(body) : 0;
	char hdr[512], *buf = NULL, *p;
	ssize_t n;
	int fd, hl;

	*resp = NULL;
	if (inet_pton(AF_INET, addr, &sa.sin_addr) != 1) {
		snprintf(err, errlen, "'%s' is not an IPv4 address", addr);
		return -1;
	}
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -1;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		snprintf(err, errlen, "connect %s:%u: %s", addr, port, strerror(errno));
		goto fail;
	}
	hl = snprintf(hdr, sizeof(hdr),
		      "%s %s HTTP/1.0\r\nHost: %s:%u\r\nUser-Agent: tidemark\r\n"
		      "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n",
		      method, path, addr, port, bl);
	if (hl >= (int)sizeof(hdr) || send(fd, hdr, hl, MSG_NOSIGNAL) != hl ||
	    (bl && send(fd, body, bl, MSG_NOSIGNAL) != (ssize_t)bl)) {
		snprintf(err, errlen, "send to %s:%u: %s", addr, port, strerror(errno));
		goto fail;
	}
	for (;;) {
		if (len + 4096 + 1 > cap) {
			char *nb;

			if (cap >= (8u << 20)) {
				snprintf(err, errlen, "response larger than 8 MiB");
				goto fail;
			}
			cap = cap ? cap * 2 : 16384;
			nb = realloc(buf, cap);
			if (!nb) {
				snprintf(err, errlen, "out of memory");
				goto fail;
			}
			buf = nb;
		}
		n = recv(fd, buf + len, cap - len - 1, 0);
		if (n < 0) {
			snprintf(err, errlen, "receive from %s:%u: %s", addr, port,
				 strerror(errno));
			goto fail;
		}
		if (n == 0)
			break;
		len += n;
	}
	close(fd);
	if (!buf || sscanf(buf, "HTTP/%*s %d", status) != 1) {
		snprintf(err, errlen, "no HTTP response from %s:%u", addr, port);
		free(buf);
		return -1;
	}
	buf[len] = 0;
	p = strstr(buf, "\r\n\r\n");
	p = p ? p + 4 : buf + len;
	memmove(buf, p, strlen(p) + 1);
	*resp = buf;
	return 0;
fail:
	close(fd);
	free(buf);
	return -1;
}
