/* driver.c - runs a fuzz target without libFuzzer (a compiler without -fsanitize=fuzzer,
 * such as GCC): every input of the corpus folders and files given, then inputs made from
 * them by seeded random changes, until a time or run budget is spent. The same target
 * sources, built with AddressSanitizer and UBSan where the compiler has them.
 *
 * usage: fuzz_TARGET [-max_total_time=S] [-runs=N] [-seed=N] [-max_len=N]
 *                    [-artifact_prefix=P] [FOLDER | FILE]...
 * The options are libFuzzer's (others starting with '-' are ignored), so tests/fuzz/fuzz.sh
 * runs either kind the same way. -runs=0: only the corpus. An input that fails is written
 * to P + "crash-<hash>" before the process ends. */
#include "fuzzutil.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct unit {
    uint8_t *p;
    size_t n;
};

static struct unit *units;
static size_t nunits, capunits;
static const uint8_t *cur;
static size_t curn;
static char artifact[4096] = "./";

/* Writes the input being run, once, with write(2) only: also from a signal handler. */
static void save_current(void)
{
    static volatile sig_atomic_t saved;
    char path[4200];
    uint64_t h = 1469598103934665603ULL;
    size_t k;
    int fd;

    if (saved || !cur)
        return;
    saved = 1;
    for (size_t i = 0; i < curn; i++)
        h = (h ^ cur[i]) * 1099511628211ULL;
    k = strlen(artifact);
    memcpy(path, artifact, k);
    memcpy(path + k, "crash-", 6);
    k += 6;
    for (int i = 15; i >= 0; i--)
        path[k++] = "0123456789abcdef"[h >> (4 * i) & 15];
    path[k] = '\0';
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
        for (size_t off = 0; off < curn;) {
            ssize_t w = write(fd, cur + off, curn - off);
            if (w <= 0)
                break;
            off += (size_t)w;
        }
        close(fd);
        static const char msg[] = "driver: the failing input is in ";
        (void)!write(2, msg, sizeof msg - 1);
        (void)!write(2, path, k);
        (void)!write(2, "\n", 1);
    }
}

static void on_signal(int sig)
{
    save_current();
    signal(sig, SIG_DFL);
    raise(sig);
}

/* The sanitizers' runtime calls this before it ends the process on a report. */
void __sanitizer_set_death_callback(void (*cb)(void)) __attribute__((weak));

static void add_unit(const uint8_t *p, size_t n)
{
    if (nunits == capunits) {
        capunits = capunits ? 2 * capunits : 64;
        units = realloc(units, capunits * sizeof *units);
        if (!units)
            abort();
    }
    units[nunits].p = malloc(n ? n : 1);
    memcpy(units[nunits].p, p, n);
    units[nunits++].n = n;
}

static void add_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    uint8_t *buf = NULL;
    size_t n = 0, cap = 0, r;

    if (!f)
        return;
    do {
        if (n == cap) {
            cap = cap ? 2 * cap : 4096;
            buf = realloc(buf, cap);
            if (!buf)
                abort();
        }
        r = fread(buf + n, 1, cap - n, f);
        n += r;
    } while (r > 0);
    fclose(f);
    add_unit(buf, n);
    free(buf);
}

static void add_path(const char *path)
{
    struct stat st;
    DIR *d;
    struct dirent *e;
    char sub[4096];

    if (stat(path, &st) != 0)
        return;
    if (!S_ISDIR(st.st_mode)) {
        add_file(path);
        return;
    }
    if (!(d = opendir(path)))
        return;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.') {
            snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
            add_path(sub);
        }
    closedir(d);
}

static uint64_t rng;

static uint64_t next(void)
{
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return rng * 0x2545F4914F6CDD1DULL;
}

static void run(const uint8_t *p, size_t n)
{
    cur = p;
    curn = n;
    LLVMFuzzerTestOneInput(p, n);
    cur = NULL;
}

/* Pieces that the targets' parsers look for: placeholders, escapes, UTF-8 edges, words. */
static const char *const tokens[] = {
    "%", "%p", "%h", "%q{", "}", "%%", "{", "=", "\n", "\t", " ", "\\", "\"", "\x01",
    "\x7f", "\x80", "\xbf", "\xc0", "\xc2", "\xe0\xa0", "\xed\xa0\x80", "\xef\xbf\xbd",
    "\xf0\x90\x80", "\xf4\x90\x80\x80", "\xff", "_Z", "_ZN", "void ", "(", ")", "<", ">",
    "...", "Kernel Module", " for x86_64 ", "580.95.05", "1.2", "..", "0", "9",
    "-1", "+1", "4294967296", "9223372036854775808", "1e3", "0x10", "yes", "off", "auto",
    "json", ".json", "cupti", "both", "debug", "WARMUP=", "OUTPUT=", "GATE=", "SAMPLE=",
    "LOG=",
};

static size_t mutate(uint8_t *b, size_t n, size_t max)
{
    int rounds = 1 + (int)(next() % 4);

    while (rounds--) {
        size_t at = n ? next() % (n + 1) : 0;
        switch (next() % 7) {
        case 0: /* flip a bit */
            if (n)
                b[at % n] ^= (uint8_t)(1u << (next() % 8));
            break;
        case 1: /* any byte */
            if (n)
                b[at % n] = (uint8_t)next();
            break;
        case 2: /* insert a byte */
            if (n < max) {
                memmove(b + at + 1, b + at, n - at);
                b[at] = (uint8_t)next();
                n++;
            }
            break;
        case 3: { /* delete a run */
            size_t k = n - at ? 1 + next() % (n - at) % 8 : 0;
            memmove(b + at, b + at + k, n - at - k);
            n -= k;
            break;
        }
        case 4: { /* insert a token */
            const char *t = tokens[next() % (sizeof tokens / sizeof tokens[0])];
            size_t k = strlen(t);
            if (n + k <= max) {
                memmove(b + at + k, b + at, n - at);
                memcpy(b + at, t, k);
                n += k;
            }
            break;
        }
        case 5: { /* a piece of another unit */
            struct unit *u = &units[next() % nunits];
            size_t from = u->n ? next() % u->n : 0, k = u->n - from;
            k = k > 64 ? 64 : k;
            if (n + k <= max) {
                memmove(b + at + k, b + at, n - at);
                memmove(b + at, u->p + from, k);
                n += k;
            }
            break;
        }
        default: /* repeat a piece of itself */
            if (n && n < max) {
                size_t from = next() % n, k = 1 + next() % (n - from);
                k = k > max - n ? max - n : k;
                memmove(b + at + k, b + at, n - at);
                memmove(b + at, b + (from < at ? from : from + k), k);
                n += k;
            }
        }
    }
    return n;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    double budget = 0, t0 = now();
    long runs = -1, done = 0;
    size_t max = 4096;
    uint64_t seed = 1;
    uint8_t *buf;

    for (int i = 1; i < argc; i++) {
        if (!strncmp(argv[i], "-max_total_time=", 16))
            budget = atof(argv[i] + 16);
        else if (!strncmp(argv[i], "-runs=", 6))
            runs = atol(argv[i] + 6);
        else if (!strncmp(argv[i], "-seed=", 6))
            seed = strtoull(argv[i] + 6, NULL, 10);
        else if (!strncmp(argv[i], "-max_len=", 9))
            max = (size_t)atol(argv[i] + 9);
        else if (!strncmp(argv[i], "-artifact_prefix=", 17))
            snprintf(artifact, sizeof artifact, "%s", argv[i] + 17);
        else if (argv[i][0] != '-')
            add_path(argv[i]);
    }
    if (__sanitizer_set_death_callback)
        __sanitizer_set_death_callback(save_current);
    signal(SIGABRT, on_signal);
    signal(SIGSEGV, on_signal);
    signal(SIGBUS, on_signal);
    signal(SIGFPE, on_signal);
    signal(SIGILL, on_signal);
    if (nunits == 0)
        add_unit((const uint8_t *)"", 0);
    for (size_t i = 0; i < nunits; i++)
        run(units[i].p, units[i].n);
    fprintf(stderr, "driver: %zu corpus inputs ran\n", nunits);
    rng = seed ? seed : 1;
    buf = malloc(max + 64);
    if (runs < 0 && budget <= 0)
        runs = 0;
    while ((runs < 0 || done < runs) && (budget <= 0 || now() - t0 < budget)) {
        struct unit *u = &units[next() % nunits];
        size_t n = u->n < max ? u->n : max;
        memcpy(buf, u->p, n);
        n = mutate(buf, n, max);
        /* An exact-size copy: AddressSanitizer sees a read past the input. */
        uint8_t *in = malloc(n ? n : 1);
        memcpy(in, buf, n);
        run(in, n);
        free(in);
        done++;
    }
    fprintf(stderr, "driver: %ld generated inputs in %.1f s (seed %llu)\n", done, now() - t0,
            (unsigned long long)seed);
    free(buf);
    for (size_t i = 0; i < nunits; i++)
        free(units[i].p);
    free(units);
    return 0;
}
