// Counts the heap allocations of a process, for "allocations per call" (BENCHMARKS.md section 6).
//
//   cc -O2 -shared -fPIC -o malloc_count.so malloc_count.c -lpthread
//   MALLOC_COUNT_FILE=/tmp/counts LD_PRELOAD=./malloc_count.so adloaderd ...
//   touch /tmp/counts.req     # within ~20 ms /tmp/counts holds "allocations N bytes M"
//
// malloc, calloc, realloc, memalign, posix_memalign, aligned_alloc and valloc each count one
// allocation (realloc(NULL, n) too; realloc of a live block counts, as it may move it), forwarded
// to glibc's own __libc_* entry points so no dlsym bootstrap is needed. A snapshot is taken when
// the request file appears (a polling thread, so the process needs no signal handler of ours):
// the difference of two snapshots around a fixed number of calls, divided by the calls, is the
// count per call in one run of the server, start-up excluded.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

static uint64_t allocations;
static uint64_t bytes;

static inline void count(size_t n) {
    __atomic_fetch_add(&allocations, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&bytes, n, __ATOMIC_RELAXED);
}

void *malloc(size_t n) { count(n); return __libc_malloc(n); }
void *calloc(size_t m, size_t n) { count(m * n); return __libc_calloc(m, n); }
void *realloc(void *p, size_t n) { count(n); return __libc_realloc(p, n); }
void *memalign(size_t a, size_t n) { count(n); return __libc_memalign(a, n); }
void *aligned_alloc(size_t a, size_t n) { count(n); return __libc_memalign(a, n); }
void *valloc(size_t n) { count(n); return __libc_memalign((size_t)sysconf(_SC_PAGESIZE), n); }
int posix_memalign(void **out, size_t a, size_t n) {
    count(n);
    void *p = __libc_memalign(a, n);
    if (p == NULL) return ENOMEM;
    *out = p;
    return 0;
}

static char out_path[4096];
static char req_path[4100];

static void *poll_requests(void *unused) {
    (void)unused;
    for (;;) {
        if (access(req_path, F_OK) == 0) {
            char line[128];
            int len = snprintf(line, sizeof line, "allocations %llu bytes %llu\n",
                               (unsigned long long)__atomic_load_n(&allocations, __ATOMIC_RELAXED),
                               (unsigned long long)__atomic_load_n(&bytes, __ATOMIC_RELAXED));
            char tmp[4110];
            snprintf(tmp, sizeof tmp, "%s.tmp", out_path);
            int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
            if (fd >= 0) {
                if (write(fd, line, (size_t)len) != len) { /* the reader sees a short file */ }
                close(fd);
                rename(tmp, out_path);
            }
            unlink(req_path);
        }
        usleep(20000);
    }
    return NULL;
}

__attribute__((constructor)) static void start(void) {
    const char *path = getenv("MALLOC_COUNT_FILE");
    if (path == NULL || strlen(path) >= sizeof out_path) return;
    strcpy(out_path, path);
    snprintf(req_path, sizeof req_path, "%s.req", path);
    // Children (none expected) would share the files: only the first process counts.
    unsetenv("MALLOC_COUNT_FILE");
    pthread_t thread;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_create(&thread, &attr, poll_requests, NULL);
    pthread_attr_destroy(&attr);
}
