/* trace.c - KTIME_TRACE (trace.h). */
#include "ac_config.h" /* autoconf: _GNU_SOURCE */
#include "trace.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <uthash.h>

#include "jsonout.h"
#include "sysinfo.h"

#define TRACE_CHUNK 65536u

void trace_init(struct trace *t, uint64_t max)
{
    memset(t, 0, sizeof *t);
    t->max = max;
}

void trace_add(struct trace *t, uint64_t ts_ns, uint64_t dur_ns, const char *name,
               uint32_t kernel, int device, uint64_t stream, const struct kshape *shape)
{
    uint32_t c = (uint32_t)(t->n / TRACE_CHUNK);

    if (t->n >= t->max) {
        t->dropped++;
        return;
    }
    if (c >= t->nchunks) {
        if (c >= t->chunks_cap) {
            uint32_t cap = t->chunks_cap ? 2 * t->chunks_cap : 16;
            struct trace_ev **grown = realloc(t->chunks, cap * sizeof *grown);
            if (!grown) {
                t->dropped++;
                return;
            }
            t->chunks = grown;
            t->chunks_cap = cap;
        }
        if (!(t->chunks[c] = malloc(TRACE_CHUNK * sizeof **t->chunks))) {
            t->dropped++;
            return;
        }
        t->nchunks = c + 1;
    }
    struct trace_ev *e = &t->chunks[c][t->n % TRACE_CHUNK];
    e->ts_ns = ts_ns;
    e->dur_ns = dur_ns;
    e->name = name;
    e->kernel = kernel;
    e->device = device;
    e->stream = stream;
    if (shape)
        e->shape = *shape;
    else
        memset(&e->shape, 0, sizeof e->shape);
    t->n++;
}

static const struct trace_ev *ev_at(const struct trace *t, uint64_t i)
{
    return &t->chunks[i / TRACE_CHUNK][i % TRACE_CHUNK];
}

/* Names, demangled once each; streams numbered per device in order of appearance. */
struct name_entry {
    const char *mangled;
    char *shown;
    UT_hash_handle hh;
};
struct track {
    struct { int32_t device; uint64_t stream; } key;
    uint32_t tid;
    UT_hash_handle hh;
};

int trace_write(FILE *f, const struct trace *t, const char *(*kernel_name)(uint32_t id),
                const char *version)
{
    struct name_entry *names = NULL, *ne, *ntmp;
    struct track *tracks = NULL, *tr, *ttmp;
    uint64_t t0 = UINT64_MAX;
    uint32_t ntracks = 0;
    uint64_t named[4] = { 0 }; /* devices 0..255 whose process already has its name */
    const char *sep = "";
    int rc = 0;

    for (uint64_t i = 0; i < t->n; i++)
        if (ev_at(t, i)->ts_ns < t0)
            t0 = ev_at(t, i)->ts_ns;
    fprintf(f, "{\"displayTimeUnit\": \"ns\",\n \"otherData\": {\"tool\": \"ktime %s\", "
               "\"events\": %" PRIu64 ", \"dropped\": %" PRIu64 ", \"unplaced\": %" PRIu64
               "},\n \"traceEvents\": [",
            version, t->n, t->dropped, t->unplaced);
    for (uint64_t i = 0; i < t->n && rc == 0; i++) {
        const struct trace_ev *e = ev_at(t, i);
        const char *mangled = e->name ? e->name : kernel_name ? kernel_name(e->kernel) : NULL;
        if (!mangled)
            mangled = "<unnamed>";
        HASH_FIND_STR(names, mangled, ne);
        if (!ne) {
            if (!(ne = calloc(1, sizeof *ne))) {
                rc = -1;
                break;
            }
            ne->mangled = mangled;
            ne->shown = sysinfo_demangle(mangled);
            HASH_ADD_KEYPTR(hh, names, ne->mangled, strlen(ne->mangled), ne);
        }
        struct track key;
        memset(&key, 0, sizeof key);
        key.key.device = e->device;
        key.key.stream = e->stream;
        HASH_FIND(hh, tracks, &key.key, sizeof key.key, tr);
        if (!tr) {
            if (!(tr = calloc(1, sizeof *tr))) {
                rc = -1;
                break;
            }
            tr->key = key.key;
            tr->tid = ++ntracks;
            HASH_ADD(hh, tracks, key, sizeof tr->key, tr);
            bool first = e->device < 0 || e->device > 255 ||
                         !(named[e->device / 64] & (1ull << (e->device % 64)));
            if (first) {
                fprintf(f, "%s\n  {\"name\": \"process_name\", \"ph\": \"M\", \"pid\": %d, "
                           "\"args\": {\"name\": \"GPU %d\"}}", sep, e->device, e->device);
                sep = ",";
                if (e->device >= 0 && e->device <= 255)
                    named[e->device / 64] |= 1ull << (e->device % 64);
            }
            fprintf(f, "%s\n  {\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": %d, "
                       "\"tid\": %u, \"args\": {\"name\": \"stream %u\"}}",
                    sep, e->device, tr->tid, tr->tid);
            sep = ",";
        }
        fprintf(f, "%s\n  {\"name\": ", sep);
        json_string(f, ne->shown ? ne->shown : mangled);
        fprintf(f, ", \"cat\": \"kernel\", \"ph\": \"X\", \"ts\": %.3f, \"dur\": %.3f, "
                   "\"pid\": %d, \"tid\": %u, \"args\": {",
                (double)(e->ts_ns - t0) / 1000.0, (double)e->dur_ns / 1000.0, e->device, tr->tid);
        if (shape_known(&e->shape))
            fprintf(f, "\"grid\": \"%ux%ux%u\", \"block\": \"%ux%ux%u\", \"shared_bytes\": %u, ",
                    e->shape.grid[0], e->shape.grid[1], e->shape.grid[2], e->shape.block[0],
                    e->shape.block[1], e->shape.block[2], e->shape.smem);
        fprintf(f, "\"mangled\": ");
        json_string(f, mangled);
        fprintf(f, "}}");
        sep = ",";
    }
    fprintf(f, "%s]}\n", *sep ? "\n " : "");
    HASH_ITER(hh, names, ne, ntmp) {
        HASH_DEL(names, ne);
        free(ne->shown);
        free(ne);
    }
    HASH_ITER(hh, tracks, tr, ttmp) {
        HASH_DEL(tracks, tr);
        free(tr);
    }
    return rc == 0 && !ferror(f) ? 0 : -1;
}

void trace_free(struct trace *t)
{
    for (uint32_t i = 0; i < t->nchunks; i++)
        free(t->chunks[i]);
    free(t->chunks);
    t->chunks = NULL;
    t->nchunks = t->chunks_cap = 0;
    t->n = 0;
}
