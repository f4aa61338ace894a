#ifndef MISHAP_CCURL_H
#define MISHAP_CCURL_H

// libcurl's header only: its types and constants. The library itself is not linked; it is
// loaded when an upstream is set (CCurlShim's mishap_curl_load).
#include <curl/curl.h>

#endif
