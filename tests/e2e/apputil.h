/* apputil.h - launch plans and error helpers shared by the end-to-end test programs. */
#ifndef KTIME_E2E_APPUTIL_H
#define KTIME_E2E_APPUTIL_H

#include <cuda.h>

#define PLAN_MAX_KERNELS 1024

/* One kernel of a launch plan, from an argument "name=ns[,ns...]:count". */
struct plan_kernel {
    char *name;             /* any bytes but NUL, of any length (malloc'd) */
    char *durs;
    long count;
    long done;
};

struct plan {
    int n;
    struct plan_kernel k[PLAN_MAX_KERNELS];
    char *image;            /* the module image for the fake driver (malloc'd) */
};

/* Adds one "name=ns[,ns...]:count" argument to the plan and rebuilds plan->image
 * ("name=ns,...;name2=...", each name with '%', '=', ';' and white space written %XX, as the
 * fake driver reads them: tests/fake/README.md). The name ends at the last '=' (it may hold
 * '=' and ':' itself). Returns 0, or -1 (with a message on stderr) if malformed. */
int plan_add(struct plan *p, const char *arg);

/* Index of the kernel to launch next (round robin over kernels with launches left, so the
 * kernels interleave), marking it done; -1 when the plan is finished. */
int plan_next(struct plan *p);

/* Total launches in the plan. */
long plan_total(const struct plan *p);

/* Prints "kernel <name> launched <n>" for every kernel, in argument order. */
void plan_print(const struct plan *p);

/* Name of a CUresult ("CUDA_ERROR_INVALID_VALUE"), or "CUresult <n>" for unknown codes.
 * Returns a static string, or a thread-local buffer for unknown codes. */
const char *app_errname(CUresult r);

/* Prints "<prog>: <what> failed: <name>" on stderr and exits 1 when r != CUDA_SUCCESS. */
void app_check(CUresult r, const char *what);

/* Parses a non-negative decimal integer argument or exits 2 with a usage message. */
long app_long(const char *s, const char *what);

extern const char *app_prog;

#define CK(call) app_check((call), #call)

#endif
