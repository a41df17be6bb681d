/*
 * clockshim: an LD_PRELOAD library that shifts the wall clock of one process.
 *
 * Why not libfaketime: Debian's redis-server uses jemalloc, and libfaketime
 * 0.9.10 deadlocks or fails with jemalloc at start ("Unexpected recursive
 * calls to clock_gettime()"). This shim never needs malloc: until the real
 * clock_gettime is resolved, and while resolving it, it asks the kernel
 * directly.
 *
 * The offset is a signed number of milliseconds in the file named by
 * $REDLINE_CLOCK_FILE (e.g. "+5000" or "-250"), re-read at most every 10 ms.
 * Only CLOCK_REALTIME(_COARSE), gettimeofday and time are shifted: monotonic
 * clocks are left alone, as with a real clock step.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stddef.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

typedef int (*clock_gettime_fn)(clockid_t, struct timespec *);

static clock_gettime_fn real_clock_gettime;
static __thread int resolving;
static long long offset_ns;  /* accessed with __atomic builtins */
static long long next_check; /* monotonic ns of the next file read */

static int raw_clock_gettime(clockid_t clk, struct timespec *ts) {
	clock_gettime_fn fn = __atomic_load_n(&real_clock_gettime, __ATOMIC_ACQUIRE);
	if (fn == NULL) {
		if (resolving)
			return (int)syscall(SYS_clock_gettime, clk, ts);
		resolving = 1;
		fn = (clock_gettime_fn)dlsym(RTLD_NEXT, "clock_gettime");
		resolving = 0;
		if (fn == NULL)
			return (int)syscall(SYS_clock_gettime, clk, ts);
		__atomic_store_n(&real_clock_gettime, fn, __ATOMIC_RELEASE);
	}
	return fn(clk, ts);
}

static long long parse_ms(const char *s, ssize_t n) {
	long long v = 0;
	int neg = 0;
	ssize_t i = 0;
	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	if (i < n && (s[i] == '+' || s[i] == '-')) {
		neg = s[i] == '-';
		i++;
	}
	for (; i < n && s[i] >= '0' && s[i] <= '9'; i++)
		v = v * 10 + (s[i] - '0');
	return neg ? -v : v;
}

static long long current_offset(void) {
	struct timespec mono;
	if (raw_clock_gettime(CLOCK_MONOTONIC_COARSE, &mono) != 0)
		return __atomic_load_n(&offset_ns, __ATOMIC_RELAXED);
	long long now = (long long)mono.tv_sec * 1000000000LL + mono.tv_nsec;
	if (now >= __atomic_load_n(&next_check, __ATOMIC_RELAXED)) {
		__atomic_store_n(&next_check, now + 10000000LL, __ATOMIC_RELAXED);
		static const char *path;
		if (path == NULL) {
			/* getenv does not allocate */
			extern char **environ;
			for (char **e = environ; e && *e; e++) {
				const char *k = "REDLINE_CLOCK_FILE=";
				const char *p = *e;
				while (*k && *p == *k) {
					k++;
					p++;
				}
				if (*k == 0) {
					path = p;
					break;
				}
			}
			if (path == NULL)
				path = "";
		}
		if (path[0] != 0) {
			char buf[64];
			int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
			if (fd >= 0) {
				ssize_t n = (ssize_t)syscall(SYS_read, fd, buf, sizeof buf);
				syscall(SYS_close, fd);
				if (n > 0)
					__atomic_store_n(&offset_ns, parse_ms(buf, n) * 1000000LL, __ATOMIC_RELAXED);
			}
		}
	}
	return __atomic_load_n(&offset_ns, __ATOMIC_RELAXED);
}

static void shift(struct timespec *ts) {
	long long off = current_offset();
	if (off == 0)
		return;
	long long ns = (long long)ts->tv_sec * 1000000000LL + ts->tv_nsec + off;
	ts->tv_sec = (time_t)(ns / 1000000000LL);
	ts->tv_nsec = (long)(ns % 1000000000LL);
	if (ts->tv_nsec < 0) {
		ts->tv_nsec += 1000000000L;
		ts->tv_sec--;
	}
}

int clock_gettime(clockid_t clk, struct timespec *ts) {
	int r = raw_clock_gettime(clk, ts);
	if (r == 0 && (clk == CLOCK_REALTIME || clk == CLOCK_REALTIME_COARSE))
		shift(ts);
	return r;
}

int gettimeofday(struct timeval *tv, void *tz) {
	struct timespec ts;
	if (tz != NULL) {
		struct timezone *z = tz;
		z->tz_minuteswest = 0;
		z->tz_dsttime = 0;
	}
	if (clock_gettime(CLOCK_REALTIME, &ts) != 0)
		return -1;
	tv->tv_sec = ts.tv_sec;
	tv->tv_usec = ts.tv_nsec / 1000;
	return 0;
}

time_t time(time_t *t) {
	struct timespec ts;
	if (clock_gettime(CLOCK_REALTIME, &ts) != 0)
		return (time_t)-1;
	if (t != NULL)
		*t = ts.tv_sec;
	return ts.tv_sec;
}
