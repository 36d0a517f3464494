/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A kubeconfig file (YAML, as kubectl writes it) read for one context: the
 * server, the CA that verifies it, and the credentials tidemarkd sends. What
 * it cannot honour (exec and auth-provider plugins, basic auth, an
 * unverified server) is refused with the field named, not ignored.
 */
#ifndef __TM_KUBECONFIG_H
#define __TM_KUBECONFIG_H
#include <stddef.h>

struct tm_kubeconf {
	char context[256], cluster[256], user[256]; /* the names chosen */
	char server[256];
	char proxy[256];    /* cluster.proxy-url; "" none */
	char ca_file[4096]; /* certificate-authority, absolute; "" */
	char *ca_pem;	    /* certificate-authority-data, decoded */
	size_t ca_len;
	char *token;		  /* user.token */
	char token_file[4096];	  /* user.tokenFile, absolute; read per request */
	char cert_file[4096];	  /* user.client-certificate, absolute */
	char key_file[4096];	  /* user.client-key, absolute */
	char *cert_pem, *key_pem; /* ...-data, decoded */
	size_t cert_len, key_len;
};

/*
 * Read @text (@len bytes) as a kubeconfig for @context ("" or NULL: its
 * current-context); relative paths in it are taken from @dir (the file's
 * directory, as kubectl does). 0; -1 with what is wrong in @err (the
 * field named) and @kc holding nothing to free.
 */
int tm_kubeconfig_parse(const char *text, size_t len, const char *dir, const char *context,
			struct tm_kubeconf *kc, char *err, size_t errlen);

/* tm_kubeconfig_parse of the file @path (at most 1 MiB). */
int tm_kubeconfig_load(const char *path, const char *context, struct tm_kubeconf *kc, char *err,
		       size_t errlen);

/* Free what @kc holds (credentials are wiped first). */
void tm_kubeconfig_free(struct tm_kubeconf *kc);
#endif
