/* sysinfo.c - the command line, the NVIDIA module's version and demangled names (bounded:
 * mangled.h), for the report. */
#include "ac_config.h" /* autoconf: _GNU_SOURCE, PACKAGE_VERSION */
#include "sysinfo.h"

#include <ctype.h>
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdint.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dl.h"
#include "mangled.h"

int sysinfo_cmdline(char *buf, size_t size, const char **argv, int max)
{
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC), argc = 0;
    ssize_t n = 0, r;

    if (fd < 0 || size == 0) {
        if (fd >= 0)
            close(fd);
        return 0;
    }
    while ((size_t)n < size - 1 && (r = read(fd, buf + n, size - 1 - (size_t)n)) > 0)
        n += r;
    close(fd);
    buf[n] = '\0';
    for (ssize_t i = 0; i < n && argc < max; i += (ssize_t)strlen(buf + i) + 1)
        argv[argc++] = buf + i;
    return argc;
}

/* Whether the word [p, p+n) is a version: digits and dots, a digit first and last, a dot. */
static bool is_version(const char *p, size_t n)
{
    bool dot = false;

    if (n < 3 || !isdigit((unsigned char)p[0]) || !isdigit((unsigned char)p[n - 1]))
        return false;
    for (size_t i = 0; i < n; i++) {
        if (p[i] == '.')
            dot = true;
        else if (!isdigit((unsigned char)p[i]))
            return false;
    }
    return dot;
}

int sysinfo_parse_nvidia_version(const char *line, char *out, size_t size)
{
    const char *p = line ? strstr(line, "Kernel Module") : NULL;

    if (size)
        out[0] = '\0';
    if (!p)
        return -1;
    /* The words after "Kernel Module"; the open module puts "for x86_64" in between. */
    for (p += strlen("Kernel Module"); *p && *p != '\n';) {
        size_t n;
        while (*p == ' ' || *p == '\t')
            p++;
        n = strcspn(p, " \t\n");
        if (n && is_version(p, n)) {
            if (n + 1 > size)
                return -1;
            memcpy(out, p, n);
            out[n] = '\0';
            return 0;
        }
        p += n;
    }
    return -1;
}

void sysinfo_nvidia_version(const char *path, char *out, size_t size)
{
    char buf[512];
    FILE *f = fopen(path ? path : "/proc/driver/nvidia/version", "re");

    if (size)
        out[0] = '\0';
    if (!f)
        return;
    if (fgets(buf, sizeof buf, f))
        sysinfo_parse_nvidia_version(buf, out, size);
    fclose(f);
}

typedef char *(*demangle_fn)(const char *, char *, size_t *, int *);

/* Demangled bytes handed out so far, all threads (sysinfo_demangle's budget). */
static _Atomic uint64_t demangled_total;

char *sysinfo_demangle(const char *mangled)
{
    static demangle_fn _Atomic fn;
    static _Atomic int looked;
    demangle_fn d;
    int status = -1;
    uint64_t bound, used;
    char *out;

    if (!mangled || strncmp(mangled, "_Z", 2) != 0 ||
        strnlen(mangled, SYSINFO_DEMANGLE_MAX_MANGLED + 1) > SYSINFO_DEMANGLE_MAX_MANGLED)
        return NULL;
    /* Never a name whose demangling could be larger than the cap (a crafted name's
     * substitutions can double its output at every level), nor past the process's budget. */
    bound = mangled_bound(mangled, SYSINFO_DEMANGLE_MAX_OUT);
    used = atomic_load_explicit(&demangled_total, memory_order_relaxed);
    if (bound > SYSINFO_DEMANGLE_MAX_OUT || used + bound > SYSINFO_DEMANGLE_BUDGET)
        return NULL;
    if (!looked) {
        /* CUDA programs almost always have libstdc++ loaded already; otherwise load it
         * just for this, at exit. */
        d = (demangle_fn)dl_sym(RTLD_DEFAULT, "__cxa_demangle");
        if (!d) {
            void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
            if (h)
                d = (demangle_fn)dl_sym(h, "__cxa_demangle");
        }
        fn = d;
        looked = 1;
    }
    if (!(d = fn))
        return NULL;
    out = d(mangled, NULL, NULL, &status);
    if (status != 0 || !out) {
        free(out);
        return NULL;
    }
    atomic_fetch_add_explicit(&demangled_total, strlen(out), memory_order_relaxed);
    return out;
}

bool sysinfo_maps_have(const char *maps_path, const char *needle)
{
    char path[64], line[4096];
    bool found = false;
    FILE *f;

    if (!maps_path) {
        snprintf(path, sizeof path, "/proc/%ld/maps", (long)getppid());
        maps_path = path;
    }
    if (!needle || !*needle || !(f = fopen(maps_path, "re")))
        return false;
    /* A line longer than the buffer comes in pieces: a name cut in two is missed, which
     * only makes ktime say something it could have kept to KTIME_LOG=info. */
    while (!found && fgets(line, sizeof line, f))
        found = strstr(line, needle) != NULL;
    fclose(f);
    return found;
}

bool ktime_parent_has_ktime(void)
{
    Dl_info info;
    const char *base;

    if (!dladdr((void *)ktime_parent_has_ktime, &info) || !info.dli_fname)
        return false;
    base = strrchr(info.dli_fname, '/');
    return sysinfo_maps_have(NULL, base ? base + 1 : info.dli_fname);
}

/* The parent's pid and the start, in clock ticks since boot, of process pid, from its
 * /proc/PID/stat; false when it cannot be read. */
static bool proc_stat(long pid, long *ppid, unsigned long long *start)
{
    char path[64], buf[1024], *p;
    ssize_t n;
    int fd;

    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
        return false;
    n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return false;
    buf[n] = '\0';
    /* After the command's closing parenthesis (the command may hold any byte): field 3, the
     * state, then 4 ppid ... 22 starttime. */
    if (!(p = strrchr(buf, ')')))
        return false;
    return sscanf(p + 1, " %*c %ld %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d "
                         "%*d %*d %llu", ppid, start) == 2;
}

double sysinfo_tree_start(void)
{
    Dl_info info;
    const char *base;
    char maps[64];
    unsigned long long start;
    long pid = (long)getpid(), ppid;
    struct timespec real, boot;
    long tick = sysconf(_SC_CLK_TCK);

    if (!dladdr((void *)sysinfo_tree_start, &info) || !info.dli_fname || tick <= 0 ||
        !proc_stat(pid, &ppid, &start))
        return -1.0;
    base = strrchr(info.dli_fname, '/');
    base = base ? base + 1 : info.dli_fname;
    /* Up the chain of ancestors that have this library loaded, 64 at most. */
    for (int depth = 0; depth < 64 && ppid > 1; depth++) {
        unsigned long long pstart;
        long pp;
        snprintf(maps, sizeof maps, "/proc/%ld/maps", ppid);
        if (!sysinfo_maps_have(maps, base) || !proc_stat(ppid, &pp, &pstart))
            break;
        start = pstart;
        ppid = pp;
    }
    if (clock_gettime(CLOCK_REALTIME, &real) != 0 ||
        clock_gettime(CLOCK_BOOTTIME, &boot) != 0)
        return -1.0;
    /* The start is counted in whole ticks: one more, so that what came just before it is
     * never taken for part of the tree. */
    return (double)real.tv_sec + (double)real.tv_nsec / 1e9 -
           ((double)boot.tv_sec + (double)boot.tv_nsec / 1e9 - (double)(start + 1) / (double)tick);
}
