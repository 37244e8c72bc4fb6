/* fuzz_nvversion.c - the NVIDIA module's version from /proc/driver/nvidia/version
 * (src/core/sysinfo.c): sysinfo_parse_nvidia_version on a line, sysinfo_nvidia_version on a file.
 *
 * Input: a byte of buffer size, then the file's text. Properties: the version is what a
 * separate reading of sysinfo.h's contract finds (after "Kernel Module", on its line, the
 * first word of digits and dots with a dot, a digit at each end), or "" and -1 when there is
 * none or it does not fit; nothing is written past the buffer (exactly `size` bytes,
 * malloc'd); the file gives what its first line (as fgets reads it) gives. */
#define _GNU_SOURCE
#include "fuzzutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sysinfo.h"

static int is_version(const char *p, size_t n)
{
    int dot = 0;

    if (n < 3 || p[0] < '0' || p[0] > '9' || p[n - 1] < '0' || p[n - 1] > '9')
        return 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i] == '.')
            dot = 1;
        else if (p[i] < '0' || p[i] > '9')
            return 0;
    }
    return dot;
}

/* The version word in line: its start and length, or NULL. */
static const char *find(const char *line, size_t *len)
{
    const char *p = strstr(line, "Kernel Module");

    if (!p)
        return NULL;
    p += strlen("Kernel Module");
    for (;;) {
        size_t n = 0;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p == '\0' || *p == '\n')
            return NULL;
        while (p[n] && p[n] != ' ' && p[n] != '\t' && p[n] != '\n')
            n++;
        if (is_version(p, n)) {
            *len = n;
            return p;
        }
        p += n;
    }
}

static void check_parse(const char *line, size_t size)
{
    char *out = malloc(size ? size : 1);
    size_t n = 0;
    const char *v = find(line, &n);
    int rc;

    out[0] = 'x';
    rc = sysinfo_parse_nvidia_version(line, size ? out : out + 1, size);
    if (v && n + 1 <= size)
        FUZZ_ASSERT(rc == 0 && strlen(out) == n && memcmp(out, v, n) == 0,
                    "rc %d, '%s', want '%.*s'", rc, rc == 0 ? out : "", (int)n, v);
    else
        FUZZ_ASSERT(rc == -1 && (size == 0 ? out[0] == 'x' : out[0] == '\0'),
                    "rc %d for %zu bytes (version %zu bytes)", rc, size, v ? n : 0);
    free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fuzz_in in = { data, size };
    size_t outsz = fuzz_byte(&in) % 48;
    char *text = fuzz_field(&in), path[64], out[32], *first;
    size_t tlen = strlen(text), flen;
    int fd;

    check_parse(text, outsz);
    check_parse(text, sizeof out);
    FUZZ_ASSERT(sysinfo_parse_nvidia_version(NULL, out, sizeof out) == -1 && out[0] == '\0',
                "NULL line");

    /* The same text as the file: only its first line counts, at most 511 bytes of it. */
    fd = memfd_create("nvversion", MFD_CLOEXEC);
    if (fd < 0)
        abort();
    if (write(fd, text, tlen) != (ssize_t)tlen)
        abort();
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    sysinfo_nvidia_version(path, out, sizeof out);
    flen = strcspn(text, "\n");
    flen = flen < tlen ? flen + 1 : tlen; /* fgets keeps the newline */
    first = strndup(text, flen < 511 ? flen : 511);
    char want[32];
    sysinfo_parse_nvidia_version(first, want, sizeof want);
    FUZZ_ASSERT(strcmp(out, want) == 0, "file gives '%s', its first line '%s'", out, want);
    close(fd);
    free(first);
    free(text);
    return 0;
}
