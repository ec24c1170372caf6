// The kernel's readiness interfaces the HTTP server's event loops wait on. They are part of the C
// library (no library is linked); Foundation's Glibc module does not include their headers.
#if defined(__linux__)
#include <sys/epoll.h>
#include <sys/eventfd.h>
#endif
