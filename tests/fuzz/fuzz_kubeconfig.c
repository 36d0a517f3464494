// SPDX-License-Identifier: GPL-2.0
/*
 * A kubeconfig (YAML) as tidemarkd reads it. Contracts: a file that is
 * read has a context, cluster and user named, an https server and at least
 * one credential, each inline PEM ending at its length; a refused one says
 * why and holds nothing. Paths resolve against a directory holding ca.crt,
 * tls.crt, tls.key and token, so the accepted paths are reached too.
 */
#include <stdio.h>
#include <unistd.h>
#include "fuzz.h"
#include "kubeconfig.h"

static char dir[64];
static const char *const names[] = {"ca.crt", "tls.crt", "tls.key", "token"};

static void cleanup(void)
{
	for (int i = 0; i < 4; i++) {
		char p[128];

		snprintf(p, sizeof(p), "%s/%s", dir, names[i]);
		unlink(p);
	}
	rmdir(dir);
}

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/fuzz-kc-XXXXXX");
	if (!mkdtemp(dir))
		abort();
	for (int i = 0; i < 4; i++) {
		char p[128];
		FILE *f;

		snprintf(p, sizeof(p), "%s/%s", dir, names[i]);
		f = fopen(p, "w");
		if (!f)
			abort();
		fputs("x\n", f);
		fclose(f);
	}
	atexit(cleanup);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tm_kubeconf k;
	char err[512] = "";

	if (!dir[0])
		setup();
	if (!tm_kubeconfig_parse((const char *)data, size, dir, NULL, &k, err, sizeof(err))) {
		if (!k.context[0] || !k.cluster[0] || !k.user[0] ||
		    strncmp(k.server, "https://", 8))
			abort();
		if (!k.token && !k.token_file[0] && !k.cert_file[0] && !k.cert_pem)
			abort();
		if ((k.ca_pem && strlen(k.ca_pem) > k.ca_len) ||
		    (k.cert_pem && strlen(k.cert_pem) > k.cert_len))
			abort();
		tm_kubeconfig_free(&k);
	} else if (!err[0] || k.token || k.ca_pem || k.cert_pem || k.key_pem) {
		abort();
	}
	return 0;
}
