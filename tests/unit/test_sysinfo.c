/* test_sysinfo.c - the NVIDIA kernel module's version from /proc/driver/nvidia/version: both
 * forms of the line (proprietary and open module), lines with no version, garbage, and
 * buffers too small; and the file reader on temporary files. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(proprietary_module),
        cmocka_unit_test(open_module_line),
        cmocka_unit_test(other_layouts),
        cmocka_unit_test(no_version),
        cmocka_unit_test(small_buffer),
        cmocka_unit_test(from_files),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
