/* selfcheck.h - the check lines of the fakes' self-tests (fake_selftest.c, cupti_selftest.c):
 * "ok - <what>" or "not ok - <what>: <detail>" on stdout, which the TAP scripts number
 * (lib.sh: selftest_lines). Included by one file of each program.
 */
#ifndef SELFCHECK_H
#define SELFCHECK_H

#include <stdarg.h>
#include <stdio.h>

static int g_fail;  /* a check failed: the program exits 1 */

static void check(int ok, const char *what, const char *fmt, ...)
{
    va_list ap;
    if (ok) {
        printf("ok - %s\n", what);
        return;
    }
    g_fail = 1;
    printf("not ok - %s: ", what);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
}

/* A call's result code is want. */
#define CHECK_RC(call, want, what) do { int r_ = (int)(call); \
    check(r_ == (int)(want), what, "%s returned %d, want %d", #call, r_, (int)(want)); } while (0)

#endif
