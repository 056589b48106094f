/*
 * clockshift.so: an LD_PRELOAD library that shifts a process's wall clock (CLOCK_REALTIME and its
 * coarse variant, gettimeofday, time) by a number of seconds read from the file named by
 * CLOCKSHIFT_FILE, re-read at most every 100 ms of the monotonic clock. Writing another number into the
 * file steps the process's clock forward or back while it runs; the monotonic clocks are left alone, as
 * a real step of the system clock leaves them.
 *
 * Why not libfaketime: with it preloaded, a Swift program on Linux sees no command-line arguments (its
 * runtime's argv capture breaks), so `trellis run` prints its usage. Why not `date -s`: it steps the
 * clock of the whole machine, every other process's too. Why not `unshare --time`: a time namespace
 * offsets only CLOCK_MONOTONIC and CLOCK_BOOTTIME, and only before its first process starts.
 *
 *   cc -shared -fPIC -O2 -o clockshift.so clockshift.c -ldl
 *   echo 0 > shift; CLOCKSHIFT_FILE=shift LD_PRELOAD=./clockshift.so trellis run …; echo 3600 > shift
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>

typedef int (*clock_gettime_fn)(clockid_t, struct timespec *);

static clock_gettime_fn real_clock_gettime(void) {
    static _Atomic(clock_gettime_fn) real;
    clock_gettime_fn f = atomic_load(&real);
    if (!f) {
        f = (clock_gettime_fn)dlsym(RTLD_NEXT, "clock_gettime");
        atomic_store(&real, f);
    }
    return f;
}

/* The offset in seconds, re-read from the file when 100 ms passed since the last read. */
static long long offset_seconds(void) {
    static _Atomic long long offset;
    static _Atomic long long next_read_ns;
    struct timespec now;
    if (real_clock_gettime()(CLOCK_MONOTONIC, &now) != 0) return atomic_load(&offset);
    long long ns = (long long)now.tv_sec * 1000000000LL + now.tv_nsec;
    if (ns >= atomic_load(&next_read_ns)) {
        atomic_store(&next_read_ns, ns + 100000000LL);
        const char *path = getenv("CLOCKSHIFT_FILE");
        FILE *file = path ? fopen(path, "re") : NULL;
        if (file) {
            long long value;
            if (fscanf(file, "%lld", &value) == 1) atomic_store(&offset, value);
            fclose(file);
        }
    }
    return atomic_load(&offset);
}

int clock_gettime(clockid_t clock, struct timespec *ts) {
    int rc = real_clock_gettime()(clock, ts);
    if (rc == 0 && (clock == CLOCK_REALTIME || clock == CLOCK_REALTIME_COARSE)) ts->tv_sec += offset_seconds();
    return rc;
}

int gettimeofday(struct timeval *restrict tv, void *restrict tz) {
    struct timespec ts;
    (void)tz;
    if (clock_gettime(CLOCK_REALTIME, &ts) != 0) return -1;
    if (tv) {
        tv->tv_sec = ts.tv_sec;
        tv->tv_usec = ts.tv_nsec / 1000;
    }
    return 0;
}

time_t time(time_t *out) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    if (out) *out = ts.tv_sec;
    return ts.tv_sec;
}
