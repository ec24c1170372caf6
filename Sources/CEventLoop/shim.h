// Kernel and C-library interfaces that Foundation's Glibc module does not include: the readiness
// interfaces the HTTP server's event loops wait on, and naming a thread. They are part of the C
// library (no library is linked).
#if defined(__linux__)
#include <pthread.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

// A GNU extension, declared by <pthread.h> only with _GNU_SOURCE.
extern int pthread_setname_np(pthread_t thread, const char *name);

static inline int shim_name_current_thread(const char *name) {
    return pthread_setname_np(pthread_self(), name);
}

// Linux keeps a nice value per thread (not per process, as POSIX has it): this one's, raised by `by`.
static inline int shim_lower_current_thread_priority(int by) {
    pid_t thread = (pid_t)syscall(SYS_gettid);
    return setpriority(PRIO_PROCESS, (id_t)thread, getpriority(PRIO_PROCESS, (id_t)thread) + by);
}
#endif
