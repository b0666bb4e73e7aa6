#ifndef CCURL_SHIM_H
#define CCURL_SHIM_H
#include <curl/curl.h>

/* curl_easy_setopt, curl_multi_setopt and curl_easy_getinfo are variadic, which Swift cannot
   call: one typed wrapper per argument kind. */

typedef size_t (*CCurl_data_callback)(char *data, size_t size, size_t count, void *user);
typedef int (*CCurl_socket_callback)(CURL *easy, curl_socket_t socket, int what, void *user, void *socketUser);
typedef int (*CCurl_timer_callback)(CURLM *multi, long timeoutMilliseconds, void *user);

static inline CURLcode CCurl_easy_setopt_long(CURL *easy, CURLoption option, long value) {
    return curl_easy_setopt(easy, option, value);
}
static inline CURLcode CCurl_easy_setopt_string(CURL *easy, CURLoption option, const char *value) {
    return curl_easy_setopt(easy, option, value);
}
static inline CURLcode CCurl_easy_setopt_pointer(CURL *easy, CURLoption option, void *value) {
    return curl_easy_setopt(easy, option, value);
}
static inline CURLcode CCurl_easy_setopt_slist(CURL *easy, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(easy, option, value);
}
static inline CURLcode CCurl_easy_setopt_data_callback(CURL *easy, CURLoption option, CCurl_data_callback value) {
    return curl_easy_setopt(easy, option, value);
}
static inline CURLcode CCurl_easy_getinfo_long(CURL *easy, CURLINFO info, long *value) {
    return curl_easy_getinfo(easy, info, value);
}
static inline CURLcode CCurl_easy_getinfo_pointer(CURL *easy, CURLINFO info, void **value) {
    return curl_easy_getinfo(easy, info, value);
}
static inline CURLMcode CCurl_multi_setopt_long(CURLM *multi, CURLMoption option, long value) {
    return curl_multi_setopt(multi, option, value);
}
static inline CURLMcode CCurl_multi_setopt_pointer(CURLM *multi, CURLMoption option, void *value) {
    return curl_multi_setopt(multi, option, value);
}
static inline CURLMcode CCurl_multi_setopt_socket_callback(CURLM *multi, CCurl_socket_callback value) {
    return curl_multi_setopt(multi, CURLMOPT_SOCKETFUNCTION, value);
}
static inline CURLMcode CCurl_multi_setopt_timer_callback(CURLM *multi, CCurl_timer_callback value) {
    return curl_multi_setopt(multi, CURLMOPT_TIMERFUNCTION, value);
}
/* The CURLMsg union's `result` member, which Swift sees only as an anonymous union. */
static inline CURLcode CCurl_message_result(const CURLMsg *message) { return message->data.result; }
#endif
