#include <curl/curl.h>

/* curl_easy_setopt is variadic, which Swift cannot call: one fixed signature per argument type. */
static inline CURLcode rs_curl_easy_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode rs_curl_easy_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode rs_curl_easy_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode rs_curl_easy_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode rs_curl_easy_setopt_off(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}
typedef size_t (*rs_curl_write_callback)(char *ptr, size_t size, size_t nmemb, void *userdata);
static inline CURLcode rs_curl_easy_setopt_write_callback(CURL *handle, CURLoption option, rs_curl_write_callback value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode rs_curl_easy_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}
typedef int (*rs_curl_xferinfo_callback)(void *userdata, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow);
static inline CURLcode rs_curl_easy_setopt_xferinfo_callback(CURL *handle, CURLoption option, rs_curl_xferinfo_callback value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode rs_curl_easy_getinfo_off(CURL *handle, CURLINFO info, curl_off_t *value) {
    return curl_easy_getinfo(handle, info, value);
}
/* CURL_GLOBAL_DEFAULT is a compound macro that Swift does not import. */
static inline CURLcode rs_curl_global_init_default(void) {
    return curl_global_init(CURL_GLOBAL_DEFAULT);
}
