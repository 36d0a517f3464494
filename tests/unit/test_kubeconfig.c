// SPDX-License-Identifier: GPL-2.0
/*
 * kubeconfig files (userspace/daemon/cluster/kubeconfig.c): the context's cluster
 * and user picked as kubectl picks them, paths taken from the file's
 * directory, inline PEM decoded, and everything tidemarkd cannot honour
 * refused with the field named.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "kselftest_harness.h"
#include "kubeconfig.h"

/* base64 of "-----BEGIN CERTIFICATE-----\nMII=\n-----END CERTIFICATE-----\n" */
#define PEM64 "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JST0KLS0tLS1FTkQgQ0VSVElGSUNBVEUtLS0tLQo="

static const char base[] = "apiVersion: v1\n"
			   "kind: Config\n"
			   "current-context: main\n"
			   "clusters:\n"
			   "- name: c\n"
			   "  cluster:\n"
			   "    server: https://10.0.0.1:6443\n"
			   "    certificate-authority-data: " PEM64 "\n"
			   "contexts:\n"
			   "- name: main\n"
			   "  context: {cluster: c, user: u, namespace: x}\n"
			   "users:\n"
			   "- name: u\n"
			   "  user:\n"
			   "    token: abc.def\n";

FIXTURE(kc)
{
	char dir[64];
	char err[1024];
	struct tm_kubeconf k;
};

FIXTURE_SETUP(kc)
{
	FILE *f;

	snprintf(self->dir, sizeof(self->dir), "/tmp/tm-kc-XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
	for (int i = 0; i < 4; i++) {
		static const char *const names[] = {"ca.crt", "tls.crt", "tls.key", "token"};
		char p[128];

		snprintf(p, sizeof(p), "%s/%s", self->dir, names[i]);
		f = fopen(p, "w");
		ASSERT_NE(NULL, f);
		fputs("x\n", f);
		fclose(f);
	}
}

FIXTURE_TEARDOWN(kc)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", self->dir);
	if (system(cmd))
		TH_LOG("could not remove %s", self->dir);
}

/* @text as a kubeconfig in the fixture's directory: 0 or -1 (err set) */
static int parse(FIXTURE_DATA(kc) * self, const char *text, const char *context)
{
	return tm_kubeconfig_parse(text, strlen(text), self->dir, context, &self->k, self->err,
				   sizeof(self->err));
}

/* base[] with @from replaced by @to */
static char *edit(const char *from, const char *to)
{
	const char *at = strstr(base, from);
	char *s;

	if (!at)
		return NULL;
	if (asprintf(&s, "%.*s%s%s", (int)(at - base), base, to, at + strlen(from)) < 0)
		return NULL;
	return s;
}

static int parse_edit(FIXTURE_DATA(kc) * self, const char *from, const char *to)
{
	char *s = edit(from, to);
	int ret = s ? parse(self, s, NULL) : -2;

	free(s);
	return ret;
}

TEST_F(kc, current_context_token_and_inline_ca)
{
	ASSERT_EQ(0, parse(self, base, NULL)) TH_LOG("%s", self->err);
	ASSERT_STREQ("main", self->k.context);
	ASSERT_STREQ("c", self->k.cluster);
	ASSERT_STREQ("u", self->k.user);
	ASSERT_STREQ("https://10.0.0.1:6443", self->k.server);
	ASSERT_STREQ("abc.def", self->k.token);
	ASSERT_NE(NULL, self->k.ca_pem);
	ASSERT_EQ(0, strncmp(self->k.ca_pem, "-----BEGIN CERTIFICATE-----\nMII=\n", 33));
	ASSERT_EQ(strlen(self->k.ca_pem), self->k.ca_len);
	ASSERT_EQ(0, self->k.ca_file[0]);
	tm_kubeconfig_free(&self->k);
	ASSERT_EQ(NULL, self->k.token);
}

TEST_F(kc, named_context_with_paths_relative_to_the_file)
{
	char want[128];
	const char *text = "current-context: main\n"
			   "clusters:\n"
			   "- {name: c, cluster: {server: 'https://api.example:443', "
			   "certificate-authority: ca.crt}}\n"
			   "- name: other\n"
			   "  cluster: {server: https://x:1}\n"
			   "contexts:\n"
			   "- {name: main, context: {cluster: other, user: t}}\n"
			   "- {name: node, context: {cluster: c, user: cert}}\n"
			   "users:\n"
			   "- {name: t, user: {tokenFile: token}}\n"
			   "- name: cert\n"
			   "  user:\n"
			   "    client-certificate: tls.crt\n"
			   "    client-key: tls.key\n";

	ASSERT_EQ(0, parse(self, text, "node")) TH_LOG("%s", self->err);
	ASSERT_STREQ("https://api.example:443", self->k.server);
	snprintf(want, sizeof(want), "%s/ca.crt", self->dir);
	ASSERT_STREQ(want, self->k.ca_file);
	snprintf(want, sizeof(want), "%s/tls.crt", self->dir);
	ASSERT_STREQ(want, self->k.cert_file);
	snprintf(want, sizeof(want), "%s/tls.key", self->dir);
	ASSERT_STREQ(want, self->k.key_file);
	ASSERT_EQ(NULL, self->k.token);
	tm_kubeconfig_free(&self->k);
	/* its current context: a token file, absolute */
	ASSERT_EQ(0, parse(self, text, NULL)) TH_LOG("%s", self->err);
	snprintf(want, sizeof(want), "%s/token", self->dir);
	ASSERT_STREQ(want, self->k.token_file);
	ASSERT_STREQ("https://x:1", self->k.server);
	tm_kubeconfig_free(&self->k);
}

TEST_F(kc, json_and_anchors_are_yaml_too)
{
	const char *json = "{\"current-context\":\"a\",\"clusters\":[{\"name\":\"c\",\"cluster\":"
			   "{\"server\":\"https://h:6443\"}}],\"contexts\":[{\"name\":\"a\","
			   "\"context\":{\"cluster\":\"c\",\"user\":\"u\"}}],\"users\":[{\"name\":"
			   "\"u\",\"user\":{\"token\":\"t\"}}]}";
	const char *anchors =
		"current-context: a\n"
		"clusters: [{name: c, cluster: &cl {server: 'https://h:1'}}]\n"
		"contexts: [{name: a, context: {cluster: c, user: u}}]\n"
		"users: [{name: u, user: {token: &t tok}}, {name: v, user: {token: *t}}]\n";

	ASSERT_EQ(0, parse(self, json, NULL)) TH_LOG("%s", self->err);
	ASSERT_STREQ("t", self->k.token);
	tm_kubeconfig_free(&self->k);
	ASSERT_EQ(0, parse(self, anchors, NULL)) TH_LOG("%s", self->err);
	ASSERT_STREQ("tok", self->k.token);
	tm_kubeconfig_free(&self->k);
}

TEST_F(kc, what_cannot_be_honoured_is_refused_by_name)
{
	static const struct {
		const char *from, *to, *msg;
	} cases[] = {
		{"    token: abc.def\n", "    exec: {command: aws}\n",
		 "users[u].user.exec: credential plugins are not supported"},
		{"    token: abc.def\n", "    auth-provider: {name: gcp}\n",
		 "users[u].user.auth-provider: not supported"},
		{"    token: abc.def\n", "    username: a\n    password: b\n",
		 "users[u].user.username: basic authentication is not supported"},
		{"    token: abc.def\n", "    token: a\n    as: admin\n",
		 "users[u].user.as: impersonation is not supported"},
		{"    server: https://10.0.0.1:6443\n",
		 "    server: https://10.0.0.1:6443\n    insecure-skip-tls-verify: true\n",
		 "clusters[c].cluster.insecure-skip-tls-verify: refused"},
		{"    server: https://10.0.0.1:6443\n",
		 "    server: https://10.0.0.1:6443\n    insecure-skip-tls-verify: maybe\n",
		 "clusters[c].cluster.insecure-skip-tls-verify: 'maybe' is not true or false"},
		{"    server: https://10.0.0.1:6443\n",
		 "    server: https://10.0.0.1:6443\n    tls-server-name: api\n",
		 "clusters[c].cluster.tls-server-name: not supported"},
		{"https://10.0.0.1:6443", "http://10.0.0.1:8080",
		 "clusters[c].cluster.server: 'http://10.0.0.1:8080' must be https"},
		{"    server: https://10.0.0.1:6443\n", "", "clusters[c].cluster.server: missing"},
		{"    token: abc.def\n", "    token: a\n    tokenFile: token\n",
		 "users[u].user: both token and tokenFile given"},
		{"    token: abc.def\n", "    client-certificate: tls.crt\n",
		 "users[u].user: a client certificate needs its key"},
		{"    token: abc.def\n", "    client-key: tls.key\n    token: a\n",
		 "users[u].user: a client certificate needs its key"},
		{"    token: abc.def\n",
		 "    client-certificate: tls.crt\n    client-certificate-data: " PEM64
		 "\n    client-key: tls.key\n",
		 "users[u].user: both client-certificate and client-certificate-data given"},
		{"    token: abc.def\n", "    tokenFile: nope\n", "users[u].user.tokenFile: "},
		{"    token: abc.def\n", "    token: ''\n", "users[u].user: no credentials"},
		{"    token: abc.def\n", "    token: [a]\n", "users[u].user.token: not a string"},
		{"certificate-authority-data: " PEM64, "certificate-authority-data: '!!!'",
		 "clusters[c].cluster.certificate-authority-data: not base64"},
		{"certificate-authority-data: " PEM64, "certificate-authority-data: aGVsbG8K",
		 "clusters[c].cluster.certificate-authority-data: does not decode to PEM"},
		{"current-context: main", "current-context: gone",
		 "contexts: no entry named 'gone'"},
		{"current-context: main", "current-context: ''", "current-context is empty"},
		{"user: u, namespace", "user: nobody, namespace", "users: no entry named 'nobody'"},
		{"{cluster: c, user: u, namespace: x}", "{user: u}",
		 "contexts[main].context.cluster: missing"},
		{"- name: u\n  user:\n", "- name: u\n  user: {token: x}\n- name: u\n  user:\n",
		 "users: two entries named 'u'"},
		{"users:\n- name: u\n  user:\n    token: abc.def\n", "users: 5\n",
		 "users: not a list"},
		{"  context: {", "  context: 7\n  x: {", "contexts[main].context: not a mapping"},
		{"kind: Config\n", "kind: Config\nkind: Other\n", "line 3: key 'kind' given twice"},
		{"  user:\n    token: abc.def\n", "  user:\n    token: [abc\n", "line 16"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int r = parse_edit(self, cases[i].from, cases[i].to);

		ASSERT_NE(-2, r) TH_LOG("case %zu: '%s' not in the base", i, cases[i].from);
		ASSERT_EQ(-1, r) TH_LOG("case %zu: accepted", i);
		ASSERT_NE(NULL, strstr(self->err, cases[i].msg))
		TH_LOG("case %zu: '%s' lacks '%s'", i, self->err, cases[i].msg);
		/* nothing kept from a refused file */
		ASSERT_EQ(NULL, self->k.token);
		ASSERT_EQ(NULL, self->k.ca_pem);
	}
}

TEST_F(kc, not_a_kubeconfig)
{
	ASSERT_EQ(-1, parse(self, "", NULL));
	ASSERT_NE(NULL, strstr(self->err, "the file is empty"));
	ASSERT_EQ(-1, parse(self, "- a\n- b\n", NULL));
	ASSERT_NE(NULL, strstr(self->err, "not a mapping"));
	ASSERT_EQ(-1, parse(self, "a: [b\n", NULL));
	ASSERT_NE(NULL, strstr(self->err, "line 2"));
	ASSERT_EQ(-1, parse(self, "{[a]: b}\n", NULL));
	ASSERT_NE(NULL, strstr(self->err, "a key that is not a plain value"));
}

/* aliases of aliases: nine levels of ten would be 10^9 nodes */
TEST_F(kc, an_alias_bomb_is_bounded)
{
	char text[2048];
	int n = snprintf(text, sizeof(text), "a0: &a0 [x,x,x,x,x,x,x,x,x,x]\n");

	for (int i = 1; i < 9; i++)
		n += snprintf(text + n, sizeof(text) - n,
			      "a%d: &a%d [*a%d,*a%d,*a%d,*a%d,*a%d,*a%d,*a%d,*a%d,*a%d,*a%d]\n", i,
			      i, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1,
			      i - 1);
	ASSERT_EQ(-1, parse(self, text, NULL));
	ASSERT_NE(NULL, strstr(self->err, "expands (aliases) beyond"));
}

TEST_F(kc, a_file_and_its_directory)
{
	char path[128], want[160];
	FILE *f;

	snprintf(path, sizeof(path), "%s/config", self->dir);
	f = fopen(path, "w");
	ASSERT_NE(NULL, f);
	fputs("current-context: a\n"
	      "clusters: [{name: c, cluster: {server: 'https://h:1', certificate-authority: "
	      "ca.crt}}]\n"
	      "contexts: [{name: a, context: {cluster: c, user: u}}]\n"
	      "users: [{name: u, user: {token: t}}]\n",
	      f);
	fclose(f);
	ASSERT_EQ(0, tm_kubeconfig_load(path, NULL, &self->k, self->err, sizeof(self->err)))
	TH_LOG("%s", self->err);
	snprintf(want, sizeof(want), "%s/ca.crt", self->dir);
	ASSERT_STREQ(want, self->k.ca_file);
	tm_kubeconfig_free(&self->k);
	snprintf(path, sizeof(path), "%s/none", self->dir);
	ASSERT_EQ(-1, tm_kubeconfig_load(path, NULL, &self->k, self->err, sizeof(self->err)));
	snprintf(want, sizeof(want), "%s: No such file or directory", path);
	ASSERT_STREQ(want, self->err);
}

TEST_HARNESS_MAIN
