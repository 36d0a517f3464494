/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libcurl opened at run time, for httpc.c built with TM_HTTPC_DLOPEN
 * (tidemarkctl). Only `tidemarkctl status` makes a request, and linking
 * libcurl loads its ~30 libraries at every start: in the test VM that made
 * each tidemarkctl call ~210 ms against ~70 ms without it. Included by
 * httpc.c after <curl/curl.h>; every curl_* call there goes through the
 * pointers below, filled by tm_curl_load().
 */
#ifndef __TM_CURL_DL_H
#define __TM_CURL_DL_H
#include <dlfcn.h>
#include <stdio.h>

/* the one libcurl ABI Debian's libcurl4 packages ship */
#define TM_CURL_SONAME "libcurl.so.4"

/* X(return type, name, parameters) of every libcurl function httpc.c calls */
#define TM_CURL_FUNCS(X)                                                               \
	X(CURLcode, curl_global_init, (long))                                          \
	X(const char *, curl_easy_strerror, (CURLcode))                                \
	X(CURLU *, curl_url, (void))                                                   \
	X(void, curl_url_cleanup, (CURLU *))                                           \
	X(CURLUcode, curl_url_set, (CURLU *, CURLUPart, const char *, unsigned int))   \
	X(CURLUcode, curl_url_get, (const CURLU *, CURLUPart, char **, unsigned int))  \
	X(const char *, curl_url_strerror, (CURLUcode))                                \
	X(void, curl_free, (void *))                                                   \
	X(CURL *, curl_easy_init, (void))                                              \
	X(CURLcode, curl_easy_setopt, (CURL *, CURLoption, ...))                       \
	X(CURLcode, curl_easy_perform, (CURL *))                                       \
	X(CURLcode, curl_easy_getinfo, (CURL *, CURLINFO, ...))                        \
	X(void, curl_easy_cleanup, (CURL *))                                           \
	X(struct curl_slist *, curl_slist_append, (struct curl_slist *, const char *)) \
	X(void, curl_slist_free_all, (struct curl_slist *))

#define TM_CURL_PTR(ret, name, args) static ret(*tm_dl_##name) args;
TM_CURL_FUNCS(TM_CURL_PTR)

/* 0 once every function is resolved; -1 with what failed in @err */
static int tm_curl_load(char *err, size_t errlen)
{
	void *h;

	if (tm_dl_curl_slist_free_all) /* resolved last: set only if all are */
		return 0;
	h = dlopen(TM_CURL_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(err, errlen, "cannot load libcurl: %s", dlerror());
		return -1;
	}
#define TM_CURL_SYM(ret, name, args)                                         \
	*(void **)&tm_dl_##name = dlsym(h, #name);                           \
	if (!tm_dl_##name) {                                                 \
		snprintf(err, errlen, "%s lacks %s", TM_CURL_SONAME, #name); \
		return -1;                                                   \
	}
	TM_CURL_FUNCS(TM_CURL_SYM)
#undef TM_CURL_SYM
	return 0;
}

/* <curl/typecheck-gcc.h> makes some of these macros: the pointers instead */
#undef curl_easy_setopt
#undef curl_easy_getinfo
#define curl_global_init    tm_dl_curl_global_init
#define curl_easy_strerror  tm_dl_curl_easy_strerror
#define curl_url	    tm_dl_curl_url
#define curl_url_cleanup    tm_dl_curl_url_cleanup
#define curl_url_set	    tm_dl_curl_url_set
#define curl_url_get	    tm_dl_curl_url_get
#define curl_url_strerror   tm_dl_curl_url_strerror
#define curl_free	    tm_dl_curl_free
#define curl_easy_init	    tm_dl_curl_easy_init
#define curl_easy_setopt    tm_dl_curl_easy_setopt
#define curl_easy_perform   tm_dl_curl_easy_perform
#define curl_easy_getinfo   tm_dl_curl_easy_getinfo
#define curl_easy_cleanup   tm_dl_curl_easy_cleanup
#define curl_slist_append   tm_dl_curl_slist_append
#define curl_slist_free_all tm_dl_curl_slist_free_all
#endif
