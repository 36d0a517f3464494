// SPDX-License-Identifier: GPL-2.0
/*
 * kubeconfig: libyaml loads the document, which becomes a jansson tree (so
 * the fields are read as everywhere else in tidemarkd); then the context's
 * cluster and user are picked and checked. Aliases are followed, with the
 * tree's size bounded so that a small file cannot expand without limit.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <jansson.h>
#include <openssl/evp.h>
#include <yaml.h>
#include "httpc.h"
#include "kubeconfig.h"

#define KC_FILE_MAX  (1 << 20)
#define KC_NODES_MAX 100000 /* nodes of the tree, aliases expanded */
#define KC_DEPTH_MAX 64

struct kx {
	char *err;
	size_t errlen;
	bool bad;
	unsigned int nodes;
};

static void __attribute__((format(printf, 2, 3))) bad(struct kx *x, const char *fmt, ...)
{
	va_list ap;

	if (x->bad)
		return; /* the first error is the one said */
	x->bad = true;
	va_start(ap, fmt);
	vsnprintf(x->err, x->errlen, fmt, ap);
	va_end(ap);
}

static bool null_scalar(const yaml_node_t *n)
{
	const char *v = (const char *)n->data.scalar.value;

	if (n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return false;
	return !*v || !strcmp(v, "~") || !strcmp(v, "null") || !strcmp(v, "Null") ||
	       !strcmp(v, "NULL");
}

/* The YAML node @i as JSON: scalars as strings (null as null), since every
 * field read here is a string or a boolean read from its text. */
static json_t *to_json(struct kx *x, yaml_document_t *doc, int i, int depth)
{
	yaml_node_t *n = yaml_document_get_node(doc, i);
	json_t *j;

	if (!n || x->bad)
		return NULL;
	if (++x->nodes > KC_NODES_MAX || depth > KC_DEPTH_MAX) {
		bad(x, "the document nests or expands (aliases) beyond %d levels or %d nodes",
		    KC_DEPTH_MAX, KC_NODES_MAX);
		return NULL;
	}
	switch (n->type) {
	case YAML_SCALAR_NODE:
		if (null_scalar(n))
			return json_null();
		j = json_stringn((const char *)n->data.scalar.value, n->data.scalar.length);
		if (!j)
			bad(x, "line %zu: a value that is not UTF-8 text", n->start_mark.line + 1);
		return j;
	case YAML_SEQUENCE_NODE:
		j = json_array();
		for (yaml_node_item_t *it = n->data.sequence.items.start;
		     j && it < n->data.sequence.items.top; it++) {
			json_t *v = to_json(x, doc, *it, depth + 1);

			if (!v || json_array_append_new(j, v)) {
				json_decref(j);
				return NULL;
			}
		}
		return j;
	case YAML_MAPPING_NODE:
		j = json_object();
		for (yaml_node_pair_t *p = n->data.mapping.pairs.start;
		     j && p < n->data.mapping.pairs.top; p++) {
			yaml_node_t *k = yaml_document_get_node(doc, p->key);
			json_t *v;

			if (!k || k->type != YAML_SCALAR_NODE) {
				bad(x, "line %zu: a key that is not a plain value",
				    (k ? k->start_mark.line : n->start_mark.line) + 1);
				break;
			}
			if (json_object_get(j, (const char *)k->data.scalar.value)) {
				bad(x, "line %zu: key '%s' given twice", k->start_mark.line + 1,
				    (const char *)k->data.scalar.value);
				break;
			}
			v = to_json(x, doc, p->value, depth + 1);
			if (!v || json_object_set_new(j, (const char *)k->data.scalar.value, v))
				break;
		}
		if (x->bad) {
			json_decref(j);
			return NULL;
		}
		return j;
	default:
		bad(x, "line %zu: an empty node", n->start_mark.line + 1);
		return NULL;
	}
}

static json_t *load_yaml(struct kx *x, const char *text, size_t len)
{
	yaml_parser_t p;
	yaml_document_t doc;
	json_t *j = NULL;

	if (!yaml_parser_initialize(&p)) {
		bad(x, "libyaml: cannot start a parser");
		return NULL;
	}
	yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
	if (!yaml_parser_load(&p, &doc)) {
		bad(x, "line %zu column %zu: %s%s%s", p.problem_mark.line + 1,
		    p.problem_mark.column + 1, p.problem ? p.problem : "not YAML",
		    p.context ? " " : "", p.context ? p.context : "");
		yaml_parser_delete(&p);
		return NULL;
	}
	if (!yaml_document_get_root_node(&doc))
		bad(x, "the file is empty");
	else
		j = to_json(x, &doc, 1, 0);
	yaml_document_delete(&doc);
	yaml_parser_delete(&p);
	return j;
}

/* @o's @key as a string: NULL when absent or null; a non-string is an
 * error naming @where.@key. */
static const char *str(struct kx *x, json_t *o, const char *where, const char *key)
{
	json_t *v = json_object_get(o, key);

	if (!v || json_is_null(v))
		return NULL;
	if (!json_is_string(v)) {
		bad(x, "%s.%s: not a string", where, key);
		return NULL;
	}
	return json_string_value(v);
}

/* The entry of list @list named @name: its @inner object. */
static json_t *named(struct kx *x, json_t *root, const char *list, const char *name,
		     const char *inner, char *where, size_t wlen)
{
	json_t *a = json_object_get(root, list), *e, *found = NULL, *in;
	size_t i;

	if (!a || json_is_null(a)) {
		bad(x, "%s: none in the file (wanted '%s')", list, name);
		return NULL;
	}
	if (!json_is_array(a)) {
		bad(x, "%s: not a list", list);
		return NULL;
	}
	json_array_foreach(a, i, e)
	{
		json_t *n = json_object_get(e, "name");

		if (!json_is_object(e) || !json_is_string(n)) {
			bad(x, "%s[%zu]: an entry without a name", list, i);
			return NULL;
		}
		if (strcmp(json_string_value(n), name))
			continue;
		if (found) {
			bad(x, "%s: two entries named '%s'", list, name);
			return NULL;
		}
		found = e;
	}
	if (!found) {
		bad(x, "%s: no entry named '%s'", list, name);
		return NULL;
	}
	snprintf(where, wlen, "%s[%s].%s", list, name, inner);
	in = json_object_get(found, inner);
	if (!json_is_object(in)) {
		bad(x, "%s: %s", where, in ? "not a mapping" : "missing");
		return NULL;
	}
	return in;
}

/* @path made absolute against @dir, and readable. */
static void path_field(struct kx *x, const char *where, const char *key, const char *path,
		       const char *dir, char *out, size_t olen)
{
	int n;

	if (!path || !*path)
		return;
	if (path[0] == '/' || !dir || !*dir)
		n = snprintf(out, olen, "%s", path);
	else
		n = snprintf(out, olen, "%s/%s", dir, path);
	if (n < 0 || (size_t)n >= olen) {
		bad(x, "%s.%s: path longer than %zu bytes", where, key, olen - 1);
		out[0] = 0;
		return;
	}
	if (access(out, R_OK)) {
		bad(x, "%s.%s: %s: %s", where, key, out, strerror(errno));
		out[0] = 0;
	}
}

/* @b64 (base64 of PEM text, line breaks allowed) decoded into *out. */
static void pem_data(struct kx *x, const char *where, const char *key, const char *b64, char **out,
		     size_t *olen)
{
	size_t n = strlen(b64);
	int got = 0, fin = 0;
	EVP_ENCODE_CTX *c;
	unsigned char *p;

	if (!*b64) {
		bad(x, "%s.%s: empty", where, key);
		return;
	}
	p = calloc(1, n / 4 * 3 + 8);
	c = EVP_ENCODE_CTX_new();
	if (!p || !c) {
		bad(x, "%s.%s: out of memory", where, key);
		goto out;
	}
	EVP_DecodeInit(c);
	if (EVP_DecodeUpdate(c, p, &got, (const unsigned char *)b64, (int)n) < 0 ||
	    EVP_DecodeFinal(c, p + got, &fin) < 0) {
		bad(x, "%s.%s: not base64", where, key);
		goto out;
	}
	got += fin;
	p[got] = 0;
	if (!memmem(p, got, "-----BEGIN ", 11)) {
		bad(x, "%s.%s: does not decode to PEM text (-----BEGIN ...)", where, key);
		goto out;
	}
	*out = (char *)p;
	*olen = got;
	p = NULL;
out:
	if (p) {
		explicit_bzero(p, n / 4 * 3 + 8);
		free(p);
	}
	EVP_ENCODE_CTX_free(c);
}

/* Exactly one of a file and its -data, or neither. */
static void file_or_data(struct kx *x, json_t *o, const char *where, const char *key,
			 const char *dir, char *file, size_t flen, char **pem, size_t *plen)
{
	char dkey[64];
	const char *f = str(x, o, where, key), *d;

	snprintf(dkey, sizeof(dkey), "%s-data", key);
	d = str(x, o, where, dkey);
	if (f && *f && d && *d) {
		bad(x, "%s: both %s and %s given: give one", where, key, dkey);
		return;
	}
	if (f)
		path_field(x, where, key, f, dir, file, flen);
	else if (d)
		pem_data(x, where, dkey, d, pem, plen);
}

static bool bool_true(struct kx *x, json_t *o, const char *where, const char *key)
{
	const char *v = str(x, o, where, key);

	if (!v)
		return false;
	if (!strcmp(v, "true") || !strcmp(v, "True") || !strcmp(v, "TRUE"))
		return true;
	if (strcmp(v, "false") && strcmp(v, "False") && strcmp(v, "FALSE"))
		bad(x, "%s.%s: '%s' is not true or false", where, key, v);
	return false;
}

static void cluster(struct kx *x, json_t *c, const char *where, const char *dir,
		    struct tm_kubeconf *kc)
{
	const char *s = str(x, c, where, "server"), *proxy;
	char why[384];

	if (!s || !*s) {
		bad(x, "%s.server: missing", where);
		return;
	}
	if (tm_httpc_url_check(s, why, sizeof(why))) {
		bad(x, "%s.server: %s", where, why);
		return;
	}
	if (strncmp(s, "https://", 8)) {
		bad(x, "%s.server: '%s' must be https (credentials go with every request)", where,
		    s);
		return;
	}
	snprintf(kc->server, sizeof(kc->server), "%s", s);
	if (bool_true(x, c, where, "insecure-skip-tls-verify"))
		bad(x,
		    "%s.insecure-skip-tls-verify: refused: tidemarkd sends credentials "
		    "only to a server it has verified",
		    where);
	if (str(x, c, where, "tls-server-name"))
		bad(x,
		    "%s.tls-server-name: not supported: name the server as its "
		    "certificate does",
		    where);
	proxy = str(x, c, where, "proxy-url");
	if (proxy && *proxy) {
		if (tm_httpc_url_check(proxy, why, sizeof(why)) && strncmp(proxy, "socks5://", 9))
			bad(x, "%s.proxy-url: %s", where, why);
		else
			snprintf(kc->proxy, sizeof(kc->proxy), "%s", proxy);
	}
	file_or_data(x, c, where, "certificate-authority", dir, kc->ca_file, sizeof(kc->ca_file),
		     &kc->ca_pem, &kc->ca_len);
}

static void user(struct kx *x, json_t *u, const char *where, const char *dir,
		 struct tm_kubeconf *kc)
{
	const char *tok = str(x, u, where, "token"), *tf = str(x, u, where, "tokenFile");

	if (json_object_get(u, "exec"))
		bad(x,
		    "%s.exec: credential plugins are not supported: give token, tokenFile "
		    "or client-certificate and client-key",
		    where);
	else if (json_object_get(u, "auth-provider"))
		bad(x,
		    "%s.auth-provider: not supported: give token, tokenFile or "
		    "client-certificate and client-key",
		    where);
	else if (json_object_get(u, "username") || json_object_get(u, "password"))
		bad(x,
		    "%s.username: basic authentication is not supported (Kubernetes "
		    "removed it in 1.19)",
		    where);
	else if (json_object_get(u, "as") || json_object_get(u, "as-groups"))
		bad(x, "%s.as: impersonation is not supported", where);
	if (tok && *tok && tf && *tf)
		bad(x, "%s: both token and tokenFile given: give one", where);
	else if (tok && *tok) {
		kc->token = strdup(tok);
		if (!kc->token)
			bad(x, "%s.token: out of memory", where);
	} else if (tf)
		path_field(x, where, "tokenFile", tf, dir, kc->token_file, sizeof(kc->token_file));
	file_or_data(x, u, where, "client-certificate", dir, kc->cert_file, sizeof(kc->cert_file),
		     &kc->cert_pem, &kc->cert_len);
	file_or_data(x, u, where, "client-key", dir, kc->key_file, sizeof(kc->key_file),
		     &kc->key_pem, &kc->key_len);
	if (x->bad)
		return;
	if (!!(kc->cert_file[0] || kc->cert_pem) != !!(kc->key_file[0] || kc->key_pem))
		bad(x, "%s: a client certificate needs its key and a key its certificate", where);
	else if (!kc->token && !kc->token_file[0] && !kc->cert_file[0] && !kc->cert_pem)
		bad(x,
		    "%s: no credentials (token, tokenFile or client-certificate and "
		    "client-key)",
		    where);
}

int tm_kubeconfig_parse(const char *text, size_t len, const char *dir, const char *context,
			struct tm_kubeconf *kc, char *err, size_t errlen)
{
	struct kx x = {.err = err, .errlen = errlen};
	char cwhere[320], uwhere[320], xwhere[320];
	const char *cname, *uname;
	json_t *root, *ctx, *c, *u;

	memset(kc, 0, sizeof(*kc));
	root = load_yaml(&x, text, len);
	if (!root)
		return -1;
	if (!json_is_object(root)) {
		bad(&x, "not a kubeconfig (the document is not a mapping)");
		goto out;
	}
	if (!context || !*context) {
		context = str(&x, root, "kubeconfig", "current-context");
		if (!x.bad && (!context || !*context)) {
			bad(&x, "current-context is empty: name a context (kubernetes.context)");
			goto out;
		}
	}
	if (x.bad)
		goto out;
	snprintf(kc->context, sizeof(kc->context), "%s", context);
	ctx = named(&x, root, "contexts", context, "context", xwhere, sizeof(xwhere));
	if (!ctx)
		goto out;
	cname = str(&x, ctx, xwhere, "cluster");
	uname = str(&x, ctx, xwhere, "user");
	if (!x.bad && (!cname || !*cname))
		bad(&x, "%s.cluster: missing", xwhere);
	if (!x.bad && (!uname || !*uname))
		bad(&x, "%s.user: missing", xwhere);
	if (x.bad)
		goto out;
	snprintf(kc->cluster, sizeof(kc->cluster), "%s", cname);
	snprintf(kc->user, sizeof(kc->user), "%s", uname);
	c = named(&x, root, "clusters", cname, "cluster", cwhere, sizeof(cwhere));
	if (c)
		cluster(&x, c, cwhere, dir, kc);
	u = x.bad ? NULL : named(&x, root, "users", uname, "user", uwhere, sizeof(uwhere));
	if (u)
		user(&x, u, uwhere, dir, kc);
out:
	json_decref(root);
	if (x.bad) {
		tm_kubeconfig_free(kc);
		return -1;
	}
	return 0;
}

int tm_kubeconfig_load(const char *path, const char *context, struct tm_kubeconf *kc, char *err,
		       size_t errlen)
{
	char dir[4096], *text, *slash, why[512];
	FILE *f = fopen(path, "r");
	size_t n;
	int ret;

	memset(kc, 0, sizeof(*kc));
	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	text = malloc(KC_FILE_MAX + 1);
	n = text ? fread(text, 1, KC_FILE_MAX + 1, f) : 0;
	fclose(f);
	if (!text || n > KC_FILE_MAX) {
		snprintf(err, errlen, "%s: %s", path,
			 text ? "larger than 1 MiB: not a kubeconfig" : "out of memory");
		free(text);
		return -1;
	}
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash)
		*(slash == dir ? slash + 1 : slash) = 0;
	else
		snprintf(dir, sizeof(dir), ".");
	ret = tm_kubeconfig_parse(text, n, dir, context, kc, why, sizeof(why));
	explicit_bzero(text, n); /* it may hold a token or a key */
	free(text);
	if (ret)
		snprintf(err, errlen, "%s: %s", path, why);
	return ret;
}

static void wipe(char **p, size_t n)
{
	if (*p) {
		explicit_bzero(*p, n);
		free(*p);
		*p = NULL;
	}
}

void tm_kubeconfig_free(struct tm_kubeconf *kc)
{
	if (kc->token)
		wipe(&kc->token, strlen(kc->token));
	wipe(&kc->ca_pem, kc->ca_len);
	wipe(&kc->cert_pem, kc->cert_len);
	wipe(&kc->key_pem, kc->key_len);
}
