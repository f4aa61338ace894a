#include "mishap_curl.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

// What libcurl's library gives, found by name once it is opened.
static struct {
    CURLcode (*global_init)(long flags);
    CURL *(*easy_init)(void);
    void (*easy_cleanup)(CURL *handle);
    const char *(*easy_strerror)(CURLcode code);
    CURLcode (*easy_setopt)(CURL *handle, CURLoption option, ...);
    CURLcode (*easy_getinfo)(CURL *handle, CURLINFO info, ...);
    struct curl_slist *(*slist_append)(struct curl_slist *list, const char *line);
    void (*slist_free_all)(struct curl_slist *list);
    CURLM *(*multi_init)(void);
    CURLMcode (*multi_cleanup)(CURLM *multi);
    CURLMcode (*multi_add_handle)(CURLM *multi, CURL *handle);
    CURLMcode (*multi_remove_handle)(CURLM *multi, CURL *handle);
    CURLMcode (*multi_perform)(CURLM *multi, int *running);
    CURLMsg *(*multi_info_read)(CURLM *multi, int *left);
    CURLMcode (*multi_poll)(CURLM *multi, struct curl_waitfd extra[], unsigned int count, int timeout_ms, int *ready);
    CURLMcode (*multi_wakeup)(CURLM *multi);
} curl;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static int load_result = -1;
static char load_error[512] = "libcurl was not loaded";

static void load(void) {
    const char *names[] = {"libcurl-gnutls.so.4", "libcurl.so.4"};
    void *library = NULL;
    for (size_t i = 0; i < sizeof names / sizeof names[0] && library == NULL; i++) {
        library = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    }
    if (library == NULL) {
        const char *reason = dlerror();
        snprintf(load_error, sizeof load_error,
                 "libcurl is not installed (libcurl-gnutls.so.4 or libcurl.so.4: on Debian, apt-get install libcurl3-gnutls): %s",
                 reason ? reason : "not found");
        return;
    }
#define FIND(field, symbol)                                                                      \
    do {                                                                                         \
        *(void **)(&curl.field) = dlsym(library, symbol);                                        \
        if (curl.field == NULL) {                                                                \
            snprintf(load_error, sizeof load_error, "libcurl has no %s: it is too old (7.68 or later is needed)", symbol); \
            return;                                                                              \
        }                                                                                        \
    } while (0)
    FIND(global_init, "curl_global_init");
    FIND(easy_init, "curl_easy_init");
    FIND(easy_cleanup, "curl_easy_cleanup");
    FIND(easy_strerror, "curl_easy_strerror");
    FIND(easy_setopt, "curl_easy_setopt");
    FIND(easy_getinfo, "curl_easy_getinfo");
    FIND(slist_append, "curl_slist_append");
    FIND(slist_free_all, "curl_slist_free_all");
    FIND(multi_init, "curl_multi_init");
    FIND(multi_cleanup, "curl_multi_cleanup");
    FIND(multi_add_handle, "curl_multi_add_handle");
    FIND(multi_remove_handle, "curl_multi_remove_handle");
    FIND(multi_perform, "curl_multi_perform");
    FIND(multi_info_read, "curl_multi_info_read");
    FIND(multi_poll, "curl_multi_poll");
    FIND(multi_wakeup, "curl_multi_wakeup");
#undef FIND
    if (curl.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        snprintf(load_error, sizeof load_error, "libcurl's global set-up (curl_global_init) failed");
        return;
    }
    load_result = 0;
}

int mishap_curl_load(char *error, size_t size) {
    pthread_once(&load_once, load);
    if (load_result != 0 && error != NULL && size > 0) snprintf(error, size, "%s", load_error);
    return load_result;
}

CURL *mishap_curl_easy_init(void) { return curl.easy_init(); }
void mishap_curl_easy_cleanup(CURL *handle) { curl.easy_cleanup(handle); }
const char *mishap_curl_easy_strerror(CURLcode code) { return curl.easy_strerror(code); }
struct curl_slist *mishap_curl_slist_append(struct curl_slist *list, const char *line) { return curl.slist_append(list, line); }
void mishap_curl_slist_free_all(struct curl_slist *list) { curl.slist_free_all(list); }

CURLM *mishap_curl_multi_init(void) { return curl.multi_init(); }
CURLMcode mishap_curl_multi_cleanup(CURLM *multi) { return curl.multi_cleanup(multi); }
CURLMcode mishap_curl_multi_add_handle(CURLM *multi, CURL *handle) { return curl.multi_add_handle(multi, handle); }
CURLMcode mishap_curl_multi_remove_handle(CURLM *multi, CURL *handle) { return curl.multi_remove_handle(multi, handle); }
CURLMcode mishap_curl_multi_perform(CURLM *multi, int *running) { return curl.multi_perform(multi, running); }
CURLMsg *mishap_curl_multi_info_read(CURLM *multi, int *left) { return curl.multi_info_read(multi, left); }
CURLMcode mishap_curl_multi_poll(CURLM *multi, int timeout_ms) { return curl.multi_poll(multi, NULL, 0, timeout_ms, NULL); }
CURLMcode mishap_curl_multi_wakeup(CURLM *multi) { return curl.multi_wakeup(multi); }

CURLcode mishap_curl_set_long(CURL *handle, CURLoption option, long value) {
    return curl.easy_setopt(handle, option, value);
}

CURLcode mishap_curl_set_pointer(CURL *handle, CURLoption option, const void *value) {
    return curl.easy_setopt(handle, option, value);
}

CURLcode mishap_curl_set_offset(CURL *handle, CURLoption option, curl_off_t value) {
    return curl.easy_setopt(handle, option, value);
}

CURLcode mishap_curl_set_write_function(CURL *handle, mishap_curl_data_callback callback) {
    return curl.easy_setopt(handle, CURLOPT_WRITEFUNCTION, callback);
}

CURLcode mishap_curl_set_header_function(CURL *handle, mishap_curl_data_callback callback) {
    return curl.easy_setopt(handle, CURLOPT_HEADERFUNCTION, callback);
}

long mishap_curl_response_code(CURL *handle) {
    long code = 0;
    if (curl.easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &code) != CURLE_OK) return 0;
    return code;
}

void *mishap_curl_private(CURL *handle) {
    char *pointer = NULL;
    if (curl.easy_getinfo(handle, CURLINFO_PRIVATE, &pointer) != CURLE_OK) return NULL;
    return pointer;
}
