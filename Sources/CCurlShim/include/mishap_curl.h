#ifndef MISHAP_CURL_SHIM_H
#define MISHAP_CURL_SHIM_H

// libcurl, loaded only when it is needed (`--upstream`): `mishap_curl_load` opens the library
// with dlopen and every other function here calls through what it found, so a Mishap without
// an upstream never loads libcurl and the many libraries it needs (docs/libcurl.md). They also
// stand in for libcurl's variadic option setters and info getters, which Swift cannot call.

#include <stddef.h>
#include <curl/curl.h>

/// Loads libcurl (`libcurl-gnutls.so.4`, else `libcurl.so.4`) and sets up its global state,
/// once; later calls return the first one's result. 0 when it is ready; otherwise -1, with
/// the reason in `error` (cut to `size` bytes).
int mishap_curl_load(char *error, size_t size);

CURL *mishap_curl_easy_init(void);
void mishap_curl_easy_cleanup(CURL *handle);
const char *mishap_curl_easy_strerror(CURLcode code);
struct curl_slist *mishap_curl_slist_append(struct curl_slist *list, const char *line);
void mishap_curl_slist_free_all(struct curl_slist *list);

CURLM *mishap_curl_multi_init(void);
CURLMcode mishap_curl_multi_cleanup(CURLM *multi);
CURLMcode mishap_curl_multi_add_handle(CURLM *multi, CURL *handle);
CURLMcode mishap_curl_multi_remove_handle(CURLM *multi, CURL *handle);
CURLMcode mishap_curl_multi_perform(CURLM *multi, int *running);
CURLMsg *mishap_curl_multi_info_read(CURLM *multi, int *left);
CURLMcode mishap_curl_multi_poll(CURLM *multi, int timeout_ms);
CURLMcode mishap_curl_multi_wakeup(CURLM *multi);

/// `curl_easy_setopt` with a `long`.
CURLcode mishap_curl_set_long(CURL *handle, CURLoption option, long value);
/// `curl_easy_setopt` with a pointer (a string, a list, the callbacks' context).
CURLcode mishap_curl_set_pointer(CURL *handle, CURLoption option, const void *value);
/// `curl_easy_setopt` with a `curl_off_t` (sizes that may exceed a `long`).
CURLcode mishap_curl_set_offset(CURL *handle, CURLoption option, curl_off_t value);

/// The function libcurl calls with each piece of the response body, or each header line.
typedef size_t (*mishap_curl_data_callback)(char *data, size_t size, size_t count, void *context);
/// `CURLOPT_WRITEFUNCTION`.
CURLcode mishap_curl_set_write_function(CURL *handle, mishap_curl_data_callback callback);
/// `CURLOPT_HEADERFUNCTION`.
CURLcode mishap_curl_set_header_function(CURL *handle, mishap_curl_data_callback callback);

/// `CURLINFO_RESPONSE_CODE`: the last response's status (0 when none came).
long mishap_curl_response_code(CURL *handle);
/// `CURLINFO_PRIVATE`: the pointer given with `CURLOPT_PRIVATE`.
void *mishap_curl_private(CURL *handle);

#endif
