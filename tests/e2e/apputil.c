/* apputil.c - launch plans and error helpers shared by the end-to-end test programs. */
#include "apputil.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *app_prog = "app";

/* Whether the fake's image format needs byte c of a name written %XX. */
static int needs_escape(unsigned char c)
{
    return c == '%' || c == '=' || c == ';' || c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static int plan_rebuild(struct plan *p)
{
    size_t size = 1, off = 0;
    char *img;
    int i;

    for (i = 0; i < p->n; i++)
        size += 3 * strlen(p->k[i].name) + strlen(p->k[i].durs) + 2;
    if (!(img = malloc(size)))
        return -1;
    for (i = 0; i < p->n; i++) {
        if (i)
            img[off++] = ';';
        for (const unsigned char *c = (const unsigned char *)p->k[i].name; *c; c++)
            if (needs_escape(*c))
                off += (size_t)snprintf(img + off, size - off, "%%%02X", *c);
            else
                img[off++] = (char)*c;
        off += (size_t)snprintf(img + off, size - off, "=%s", p->k[i].durs);
    }
    img[off] = '\0';
    free(p->image);
    p->image = img;
    return 0;
}

int plan_add(struct plan *p, const char *arg)
{
    const char *colon = strrchr(arg, ':'), *eq = NULL;
    struct plan_kernel *k;
    char *end;

    for (const char *c = arg; colon && c < colon; c++)
        if (*c == '=')
            eq = c;
    if (p->n >= PLAN_MAX_KERNELS || !eq || eq == arg || colon == eq + 1) {
        fprintf(stderr, "%s: bad kernel spec '%s' (want name=ns[,ns...]:count)\n", app_prog, arg);
        return -1;
    }
    k = &p->k[p->n];
    memset(k, 0, sizeof *k);
    k->name = strndup(arg, (size_t)(eq - arg));
    k->durs = strndup(eq + 1, (size_t)(colon - eq - 1));
    if (!k->name || !k->durs) {
        fprintf(stderr, "%s: out of memory\n", app_prog);
        return -1;
    }
    errno = 0;
    k->count = strtol(colon + 1, &end, 10);
    if (errno || *end || end == colon + 1 || k->count < 0) {
        fprintf(stderr, "%s: bad launch count in '%s'\n", app_prog, arg);
        return -1;
    }
    p->n++;
    if (plan_rebuild(p) != 0) {
        fprintf(stderr, "%s: out of memory\n", app_prog);
        return -1;
    }
    return 0;
}

int plan_next(struct plan *p)
{
    static __thread int cursor;
    int tries;
    for (tries = 0; tries < p->n; tries++) {
        int i = cursor++ % p->n;
        if (p->k[i].done < p->k[i].count) {
            p->k[i].done++;
            return i;
        }
    }
    return -1;
}

long plan_total(const struct plan *p)
{
    long t = 0;
    int i;
    for (i = 0; i < p->n; i++)
        t += p->k[i].count;
    return t;
}

void plan_print(const struct plan *p)
{
    int i;
    for (i = 0; i < p->n; i++)
        printf("kernel %s launched %ld\n", p->k[i].name, p->k[i].done);
}

const char *app_errname(CUresult r)
{
    static __thread char buf[32];
    switch (r) {
    case CUDA_SUCCESS: return "CUDA_SUCCESS";
    case CUDA_ERROR_INVALID_VALUE: return "CUDA_ERROR_INVALID_VALUE";
    case CUDA_ERROR_OUT_OF_MEMORY: return "CUDA_ERROR_OUT_OF_MEMORY";
    case CUDA_ERROR_NOT_INITIALIZED: return "CUDA_ERROR_NOT_INITIALIZED";
    case CUDA_ERROR_DEINITIALIZED: return "CUDA_ERROR_DEINITIALIZED";
    case CUDA_ERROR_INVALID_DEVICE: return "CUDA_ERROR_INVALID_DEVICE";
    case CUDA_ERROR_INVALID_IMAGE: return "CUDA_ERROR_INVALID_IMAGE";
    case CUDA_ERROR_INVALID_CONTEXT: return "CUDA_ERROR_INVALID_CONTEXT";
    case CUDA_ERROR_INVALID_HANDLE: return "CUDA_ERROR_INVALID_HANDLE";
    case CUDA_ERROR_ILLEGAL_STATE: return "CUDA_ERROR_ILLEGAL_STATE";
    case CUDA_ERROR_NOT_FOUND: return "CUDA_ERROR_NOT_FOUND";
    case CUDA_ERROR_NOT_READY: return "CUDA_ERROR_NOT_READY";
    case CUDA_ERROR_LAUNCH_TIMEOUT: return "CUDA_ERROR_LAUNCH_TIMEOUT";
    case CUDA_ERROR_CONTEXT_IS_DESTROYED: return "CUDA_ERROR_CONTEXT_IS_DESTROYED";
    case CUDA_ERROR_NOT_SUPPORTED: return "CUDA_ERROR_NOT_SUPPORTED";
    case CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED: return "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED";
    case CUDA_ERROR_STREAM_CAPTURE_INVALIDATED: return "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED";
    case CUDA_ERROR_STREAM_CAPTURE_IMPLICIT: return "CUDA_ERROR_STREAM_CAPTURE_IMPLICIT";
    case CUDA_ERROR_CAPTURED_EVENT: return "CUDA_ERROR_CAPTURED_EVENT";
    case CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD: return "CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD";
    default:
        snprintf(buf, sizeof buf, "CUresult %d", (int)r);
        return buf;
    }
}

void app_check(CUresult r, const char *what)
{
    if (r != CUDA_SUCCESS) {
        fprintf(stderr, "%s: %s failed: %s\n", app_prog, what, app_errname(r));
        exit(1);
    }
}

long app_long(const char *s, const char *what)
{
    char *end;
    long v;
    errno = 0;
    v = strtol(s, &end, 10);
    if (errno || *end || end == s || v < 0) {
        fprintf(stderr, "%s: bad %s '%s'\n", app_prog, what, s);
        exit(2);
    }
    return v;
}
