/* test_sysinfo.c - the NVIDIA kernel module's version from /proc/driver/nvidia/version: both
 * forms of the line (proprietary and open module), lines with no version, garbage, and
 * buffers too small; and the file reader on temporary files. Demangling: ordinary kernel
 * names demangle as libstdc++ does, within mangled_bound; names whose demangling explodes
 * (substitutions or template parameters that double at each level) are refused at once. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mangled.h"
#include "sysinfo.h"

/* The first lines of /proc/driver/nvidia/version as the two modules write them. */
static const char proprietary[] =
    "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.95.05  Tue Sep 23 09:51:40 UTC 2025\n";
static const char open_module[] =
    "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build  "
    "(dvs-builder@U16-I3-B03-4-3)  Thu Oct 30 02:11:43 UTC 2025\n";

/* Parses line into a buffer of size bytes (filled with '#' first): returns the result and
 * checks the output is always a terminated string. */
static int parse(const char *line, char *out, size_t size)
{
    int rc;

    memset(out, '#', size);
    rc = sysinfo_parse_nvidia_version(line, out, size);
    if (size)
        assert_non_null(memchr(out, '\0', size));
    return rc;
}

static void proprietary_module(void **state)
{
    char v[64];

    (void)state;
    assert_int_equal(parse(proprietary, v, sizeof v), 0);
    assert_string_equal(v, "580.95.05");
}

static void open_module_line(void **state)
{
    char v[64];

    (void)state;
    assert_int_equal(parse(open_module, v, sizeof v), 0);
    assert_string_equal(v, "580.159.04");
}

/* Other layouts seen or plausible: no trailing newline, tabs, an older module's two-part
 * version, an aarch64 line. */
static void other_layouts(void **state)
{
    char v[64];

    (void)state;
    assert_int_equal(parse("NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19", v,
                           sizeof v), 0);
    assert_string_equal(v, "535.104.05");
    assert_int_equal(parse("NVRM version: NVIDIA UNIX Open Kernel Module for aarch64\t570.86.10\tRelease",
                           v, sizeof v), 0);
    assert_string_equal(v, "570.86.10");
    assert_int_equal(parse("NVRM version: NVIDIA UNIX x86_64 Kernel Module  390.157  Wed Oct 12\n", v,
                           sizeof v), 0);
    assert_string_equal(v, "390.157");
}

/* No version to be found: -1 and "" (never a piece of a date or a build host). */
static void no_version(void **state)
{
    char v[64];

    (void)state;
    assert_int_equal(parse("", v, sizeof v), -1);
    assert_string_equal(v, "");
    assert_int_equal(parse(NULL, v, sizeof v), -1);
    assert_string_equal(v, "");
    assert_int_equal(parse("NVRM version: NVIDIA UNIX x86_64 Kernel Module\n", v, sizeof v), -1);
    assert_string_equal(v, "");
    assert_int_equal(parse("NVRM version: NVIDIA UNIX x86_64 Kernel Module  unknown  Tue Sep 23 "
                           "09:51:40 UTC 2025\n", v, sizeof v), -1);
    assert_string_equal(v, "");
    assert_int_equal(parse("GCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n", v, sizeof v), -1);
    assert_string_equal(v, "");
    assert_int_equal(parse("\x01\xff garbage 1.2.3 \x7f\n", v, sizeof v), -1);
    assert_string_equal(v, "");
    /* Words that are not versions: no dot, a dot at an end, letters. */
    assert_int_equal(parse("Kernel Module 580 .95 95. 5a.1 1.x\n", v, sizeof v), -1);
    assert_string_equal(v, "");
    /* The version must be on the line itself, not on the next one. */
    assert_int_equal(parse("NVRM version: NVIDIA UNIX x86_64 Kernel Module\n580.95.05\n", v, sizeof v),
                     -1);
    assert_string_equal(v, "");
}

/* A buffer too small for the version: -1 and "", never a cut version or an overrun. */
static void small_buffer(void **state)
{
    char v[16];

    (void)state;
    memset(v, '#', sizeof v);
    assert_int_equal(parse(open_module, v, 11), 0);   /* "580.159.04" and its NUL */
    assert_string_equal(v, "580.159.04");
    memset(v, '#', sizeof v);
    assert_int_equal(parse(open_module, v, 10), -1);
    assert_string_equal(v, "");
    assert_int_equal(v[10], '#');                      /* nothing written past size */
    assert_int_equal(parse(proprietary, v, 1), -1);
    assert_string_equal(v, "");
    v[0] = 'Z';
    assert_int_equal(sysinfo_parse_nvidia_version(proprietary, v, 0), -1);
    assert_int_equal(v[0], 'Z'); /* nothing written */
}

/* sysinfo_nvidia_version reads the first line of a file. */
static void from_files(void **state)
{
    char path[PATH_MAX], v[64];
    FILE *f;
    int fd;

    (void)state;
    snprintf(path, sizeof path, "%s/ktime-nvver.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    fd = mkstemp(path);
    assert_true(fd >= 0);
    f = fdopen(fd, "w");
    assert_non_null(f);
    fputs(open_module, f);
    fputs("GCC version:  gcc version 12.2.0 (Debian 12.2.0-14+deb12u1)\n", f);
    assert_int_equal(fclose(f), 0);
    memset(v, '#', sizeof v);
    sysinfo_nvidia_version(path, v, sizeof v);
    assert_string_equal(v, "580.159.04");

    f = fopen(path, "w");
    fputs(proprietary, f);
    fclose(f);
    sysinfo_nvidia_version(path, v, sizeof v);
    assert_string_equal(v, "580.95.05");

    /* Only the first line counts. */
    f = fopen(path, "w");
    fputs("something else\n", f);
    fputs(proprietary, f);
    fclose(f);
    memset(v, '#', sizeof v);
    sysinfo_nvidia_version(path, v, sizeof v);
    assert_string_equal(v, "");

    /* Empty file, missing file. */
    f = fopen(path, "w");
    fclose(f);
    memset(v, '#', sizeof v);
    sysinfo_nvidia_version(path, v, sizeof v);
    assert_string_equal(v, "");
    unlink(path);
    memset(v, '#', sizeof v);
    sysinfo_nvidia_version(path, v, sizeof v);
    assert_string_equal(v, "");
}

/* Kernel names as CUDA programs have them: plain, templates, packs, lambdas (generic and
 * nested, in local scopes), thrust's agents, a CUTLASS kernel. */
static const char *const ordinary[] = {
    "_Z6squarePfi",
    "_Z5saxpyIfEviT_PKS0_PS0_",
    "_ZN4gemm6kernelILi128ELi64EEEvPKfS2_Pfiii",
    "_Z5packsIJidcEEvDpT_",
    "_Z6launchIZ3usevEUliE_EvT_",
    "_Z6launchIZZ3usevENKUlT_E0_clIiEEDaS0_EUliE_EvS0_",
    "_Z5packsIJZ3usevEUlSt5tupleIJiS0_IJiS0_IJiiEEEEEEE2_EEvDpT_",
    "_ZN6thrust8cuda_cub4core13_kernel_agentINS0_14__parallel_for16ParallelForAgentINS0_20"
    "__uninitialized_fill7functorINS_10device_ptrIiEEiEEmEES9_mEEvT0_T1_",
    "_ZN7cutlass6KernelINS_4gemm6kernel13GemmUniversalINS1_9GemmShapeILi128ELi256ELi64EEENS_6"
    "half_tIfEENS_6layout8RowMajorELb1EEEEEvNT_6ParamsE",
    "_ZN4llvm4yaml7yamlizeISt6vectorINS_9DWARFYAML6RangesESaIS4_EENS0_12EmptyContextEEENSt9"
    "enable_ifIXsr18has_SequenceTraitsIT_EE5valueEvE4typeERNS0_2IOERS9_bRT0_",
};

typedef char *(*cxa_demangle_fn)(const char *, char *, size_t *, int *);

/* libstdc++'s own demangler, to compare with; NULL when there is none. */
static cxa_demangle_fn reference(void)
{
    void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
    return h ? (cxa_demangle_fn)dlsym(h, "__cxa_demangle") : NULL;
}

static void ordinary_names_demangle(void **state)
{
    cxa_demangle_fn ref = reference();

    (void)state;
    if (!ref)
        skip();
    for (size_t i = 0; i < sizeof ordinary / sizeof ordinary[0]; i++) {
        int status = -1;
        char *want = ref(ordinary[i], NULL, NULL, &status), *got = sysinfo_demangle(ordinary[i]);
        uint64_t b = mangled_bound(ordinary[i], SYSINFO_DEMANGLE_MAX_OUT);
        assert_int_equal(status, 0);
        if (!got)
            fail_msg("'%s' was not demangled (bound %llu)", ordinary[i], (unsigned long long)b);
        assert_string_equal(got, want);
        if (b < strlen(want))
            fail_msg("'%s': bound %llu under its %zu bytes", ordinary[i], (unsigned long long)b,
                     strlen(want));
        free(got);
        free(want);
    }
    assert_null(sysinfo_demangle("k_plain_c_kernel"));
    assert_null(sysinfo_demangle("_Z"));
}

/* n + 1 levels of Pair<X, X>, the second X a substitution of the first: 2^n Pairs, from a name
 * of about 8n bytes (94 levels: 730 bytes). */
static char *pair_bomb(int n)
{
    static const char digits[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
    char *s = malloc((size_t)n * 8 + 64), *p = s;

    p += sprintf(p, "_Z1fP4Pair");
    for (int i = 0; i < n; i++)
        p += sprintf(p, "IS_");
    p += sprintf(p, "IiiE");
    for (int i = 0; i < n; i++) {
        char id[8], *q = id + sizeof id - 1;
        int v = i;
        *q = '\0';
        do
            *--q = digits[v % 36];
        while ((v /= 36));
        p += sprintf(p, "S%s_E", q);
    }
    return s;
}

/* A crafted name: the bound says it is too large (it is: 2^94 Pairs), and sysinfo_demangle
 * gives NULL (the caller shows the mangled name) without calling the demangler, which would
 * build the whole output. A small one of the same shape is exact, and its bound holds. */
static void exploding_names_refused(void **state)
{
    char *bomb = pair_bomb(94), *small = pair_bomb(2), *d;
    cxa_demangle_fn ref = reference();

    (void)state;
    assert_int_equal(strlen(bomb), 730);
    assert_true(mangled_bound(bomb, SYSINFO_DEMANGLE_MAX_OUT) == UINT64_MAX);
    assert_true(mangled_bound(bomb, UINT64_MAX / 2) == UINT64_MAX); /* past any bound kept */
    assert_null(sysinfo_demangle(bomb));
    if (ref) {
        int status = -1;
        char *want = ref(small, NULL, NULL, &status);
        d = sysinfo_demangle(small);
        assert_non_null(d);
        assert_string_equal(d, want);
        assert_string_equal(d, "f(Pair<Pair<Pair<int, int>, Pair<int, int> >, Pair<Pair<int, int>, "
                               "Pair<int, int> > >*)");
        assert_true(mangled_bound(small, SYSINFO_DEMANGLE_MAX_OUT) >= strlen(want));
        free(want);
        free(d);
    }
    free(bomb);
    free(small);
}

/* A name longer than SYSINFO_DEMANGLE_MAX_MANGLED is not demangled; one just under is. */
static void long_names(void **state)
{
    char name[SYSINFO_DEMANGLE_MAX_MANGLED + 16], *d;
    size_t n = SYSINFO_DEMANGLE_MAX_MANGLED - 8;

    (void)state;
    if (!reference())
        skip();
    /* _Z <length> <identifier> v */
    snprintf(name, sizeof name, "_Z%zu", n);
    memset(name + strlen(name), 'k', n);
    strcpy(name + strlen("_Z") + 4 + n, "v");
    assert_int_equal(strlen(name), SYSINFO_DEMANGLE_MAX_MANGLED - 1);
    d = sysinfo_demangle(name);
    assert_non_null(d);
    assert_int_equal(strlen(d), n + 2); /* kkk...() */
    free(d);
    snprintf(name, sizeof name, "_Z%zu", n + 2);
    memset(name + strlen(name), 'k', n + 2);
    strcpy(name + strlen("_Z") + 4 + n + 2, "v");
    assert_null(sysinfo_demangle(name));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(proprietary_module),
        cmocka_unit_test(open_module_line),
        cmocka_unit_test(other_layouts),
        cmocka_unit_test(no_version),
        cmocka_unit_test(small_buffer),
        cmocka_unit_test(from_files),
        cmocka_unit_test(ordinary_names_demangle),
        cmocka_unit_test(exploding_names_refused),
        cmocka_unit_test(long_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
