// SPDX-License-Identifier: GPL-2.0
/* HTTP(S) client: libcurl's easy interface, one handle per request. */
#include <curl/curl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "httpc.h"

#define RESP_MAX (4u << 20)

int tm_httpc_global_init(char *err, size_t errlen)
{
	CURLcode rc;

	rc = curl_global_init(CURL_GLOBAL_DEFAULT);
	if (rc) {
		snprintf(err, errlen, "libcurl: %s", curl_easy_strerror(rc));
		return -1;
	}
	return 0;
}

int tm_httpc_url_check(const char *url, char *err, size_t errlen)
{
	char *scheme = NULL, *host = NULL, *user = NULL, *pw = NULL;
	CURLU *u;
	CURLUcode rc;
	int ret = -1;

	if (!*url) {
		snprintf(err, errlen, "empty URL");
		return -1;
	}
	if (strlen(url) > 255) {
		snprintf(err, errlen, "longer than 255 bytes");
		return -1;
	}
	/* a CR or LF would end up in the request line */
	for (const unsigned char *p = (const unsigned char *)url; *p; p++)
		if (*p <= 0x20 || *p == 0x7f) {
			snprintf(err, errlen, "has a space or control character (byte 0x%02x)", *p);
			return -1;
		}
	u = curl_url();
	if (!u) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	rc = curl_url_set(u, CURLUPART_URL, url, 0);
	if (rc) {
		snprintf(err, errlen, "'%s' is not a URL: %s", url, curl_url_strerror(rc));
		goto out;
	}
	curl_url_get(u, CURLUPART_SCHEME, &scheme, 0);
	curl_url_get(u, CURLUPART_HOST, &host, 0);
	curl_url_get(u, CURLUPART_USER, &user, 0);
	curl_url_get(u, CURLUPART_PASSWORD, &pw, 0);
	if (!scheme || (strcmp(scheme, "http") && strcmp(scheme, "https")))
		snprintf(err, errlen, "'%s': the scheme must be http or https", url);
	else if (!host || !*host)
		snprintf(err, errlen, "'%s' names no host", url);
	else if (user || pw)
		snprintf(err, errlen, "'%s': no user name or password in the URL", url);
	else
		ret = 0;
out:
	curl_free(scheme);
	curl_free(host);
	curl_free(user);
	curl_free(pw);
	curl_url_cleanup(u);
	return ret;
}

struct sink {
	char *p;
	size_t len;
	bool over;
	const struct tm_httpc_req *r; /* a stream: lines to r->on_line */
	bool ended;		      /* on_line or stop ended it */
};

/* A stream's complete lines to on_line; the rest, moved to the front once,
 * waits for more. false when on_line ended the stream. */
static bool on_lines(struct sink *s)
{
	size_t done = 0;
	char *nl;

	while ((nl = memchr(s->p + done, '\n', s->len - done))) {
		*nl = 0;
		if (s->r->on_line(s->r->line_arg, s->p + done, nl - (s->p + done))) {
			s->ended = true;
			return false;
		}
		done = nl + 1 - s->p;
	}
	memmove(s->p, s->p + done, s->len - done);
	s->len -= done;
	s->p[s->len] = 0;
	return true;
}

static int on_progress(void *arg, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
	struct sink *s = arg;

	if (s->r->stop && *s->r->stop) {
		s->ended = true;
		return 1;
	}
	return 0;
}

static size_t on_data(char *data, size_t size, size_t n, void *arg)
{
	struct sink *s = arg;
	size_t add = size * n;
	char *np;

	if (s->len + add > RESP_MAX) {
		s->over = true;
		return 0; /* ends the transfer */
	}
	np = realloc(s->p, s->len + add + 1);
	if (!np)
		return 0;
	memcpy(np + s->len, data, add);
	s->p = np;
	s->len += add;
	s->p[s->len] = 0;
	if (s->r && s->r->on_line && !on_lines(s))
		return 0;
	return add;
}

int tm_httpc_exchange(const struct tm_httpc_req *r, char **resp, long *status, char *err,
		      size_t errlen)
{
	char ebuf[CURL_ERROR_SIZE] = "", ct[128], *auth = NULL;
	struct curl_slist *hdr = NULL;
	struct sink s = {.r = r};
	CURLcode rc;
	CURL *c;

	*resp = NULL;
	c = curl_easy_init();
	if (!c) {
		snprintf(err, errlen, "libcurl: cannot make a handle");
		return -1;
	}
	curl_easy_setopt(c, CURLOPT_URL, r->url);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)r->timeout_ms); /* the whole exchange */
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);		      /* threads: no SIGALRM */
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, ebuf);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &s);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "tidemark");
	if (r->on_line) {
		curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
		curl_easy_setopt(c, CURLOPT_XFERINFODATA, &s);
		curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
	}
	if (r->ca_file)
		curl_easy_setopt(c, CURLOPT_CAINFO, r->ca_file);
	if (r->ca_pem) {
		struct curl_blob b = {(void *)r->ca_pem, r->ca_len, CURL_BLOB_NOCOPY};

		curl_easy_setopt(c, CURLOPT_CAINFO_BLOB, &b);
	}
	if (r->cert_file)
		curl_easy_setopt(c, CURLOPT_SSLCERT, r->cert_file);
	if (r->key_file)
		curl_easy_setopt(c, CURLOPT_SSLKEY, r->key_file);
	if (r->cert_pem) {
		struct curl_blob b = {(void *)r->cert_pem, r->cert_len, CURL_BLOB_NOCOPY};

		curl_easy_setopt(c, CURLOPT_SSLCERT_BLOB, &b);
		curl_easy_setopt(c, CURLOPT_SSLCERTTYPE, "PEM");
	}
	if (r->key_pem) {
		struct curl_blob b = {(void *)r->key_pem, r->key_len, CURL_BLOB_NOCOPY};

		curl_easy_setopt(c, CURLOPT_SSLKEY_BLOB, &b);
		curl_easy_setopt(c, CURLOPT_SSLKEYTYPE, "PEM");
	}
	if (r->proxy)
		curl_easy_setopt(c, CURLOPT_PROXY, r->proxy);
	hdr = curl_slist_append(hdr, "Accept: application/json");
	if (r->bearer) {
		if (asprintf(&auth, "Authorization: Bearer %s", r->bearer) < 0)
			auth = NULL;
		if (auth)
			hdr = curl_slist_append(hdr, auth);
	}
	if (r->body) {
		snprintf(ct, sizeof(ct), "Content-Type: %s",
			 r->content_type ? r->content_type : "application/json");
		hdr = curl_slist_append(hdr, ct);
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, r->body);
	}
	if (strcmp(r->method, "GET") && strcmp(r->method, "POST"))
		curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, r->method);
	else if (!strcmp(r->method, "POST") && !r->body)
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, "");
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdr);
	rc = curl_easy_perform(c);
	if (s.ended) /* the stream's reader or stop ended it: not an error */
		rc = CURLE_OK;
	if (rc == CURLE_OK)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, status);
	curl_slist_free_all(hdr);
	if (auth) {
		explicit_bzero(auth, strlen(auth)); /* a credential: not left in the heap */
		free(auth);
	}
	curl_easy_cleanup(c);
	if (rc != CURLE_OK) {
		if (s.over)
			snprintf(err, errlen, "%s: answer larger than %u bytes", r->url, RESP_MAX);
		else
			snprintf(err, errlen, "%s: %s", r->url,
				 ebuf[0] ? ebuf : curl_easy_strerror(rc));
		free(s.p);
		return -1;
	}
	*resp = s.p ? s.p : calloc(1, 1);
	return *resp ? 0 : -1;
}

int tm_httpc_request(const char *url, const char *method, const char *body, unsigned int timeout_ms,
		     char **resp, long *status, char *err, size_t errlen)
{
	struct tm_httpc_req r = {.url = url,
				 .method = method,
				 .body = !strcmp(method, "POST") ? (body ? body : "") : NULL,
				 .timeout_ms = timeout_ms};

	return tm_httpc_exchange(&r, resp, status, err, errlen);
}
