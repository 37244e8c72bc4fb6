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

/* The metadata events that name a new track's process (the GPU, once) and thread (the stream). */
static void track_names(struct jw *w, const struct trace_ev *e, uint32_t tid, uint64_t named[4])
{
    char name[32];
    bool first = e->device < 0 || e->device > 255 ||
                 !(named[e->device / 64] & (1ull << (e->device % 64)));

    if (first) {
        jw_open(w, NULL, '{', JW_TIGHT, 0, 0);
        jw_str(w, "name", "process_name");
        jw_str(w, "ph", "M");
        jw_i64(w, "pid", e->device);
        jw_open(w, "args", '{', JW_TIGHT, 0, 0);
        snprintf(name, sizeof name, "GPU %d", e->device);
        jw_str(w, "name", name);
        jw_close(w);
        jw_close(w);
        if (e->device >= 0 && e->device <= 255)
            named[e->device / 64] |= 1ull << (e->device % 64);
    }
    jw_open(w, NULL, '{', JW_TIGHT, 0, 0);
    jw_str(w, "name", "thread_name");
    jw_str(w, "ph", "M");
    jw_i64(w, "pid", e->device);
    jw_u64(w, "tid", tid);
    jw_open(w, "args", '{', JW_TIGHT, 0, 0);
    snprintf(name, sizeof name, "stream %u", tid);
    jw_str(w, "name", name);
    jw_close(w);
    jw_close(w);
}

/* One kernel run: a complete event on its track, microseconds from the first. */
static void kernel_event(struct jw *w, const struct trace_ev *e, const char *shown,
                         const char *mangled, uint32_t tid, uint64_t t0)
{
    char dims[40];

    jw_open(w, NULL, '{', JW_TIGHT, 0, 0);
    jw_str(w, "name", shown);
    jw_str(w, "cat", "kernel");
    jw_str(w, "ph", "X");
    jw_fixed(w, "ts", (double)(e->ts_ns - t0) / 1000.0, 3);
    jw_fixed(w, "dur", (double)e->dur_ns / 1000.0, 3);
    jw_i64(w, "pid", e->device);
    jw_u64(w, "tid", tid);
    jw_open(w, "args", '{', JW_TIGHT, 0, 0);
    if (shape_known(&e->shape)) {
        snprintf(dims, sizeof dims, "%ux%ux%u", e->shape.grid[0], e->shape.grid[1],
                 e->shape.grid[2]);
        jw_str(w, "grid", dims);
        snprintf(dims, sizeof dims, "%ux%ux%u", e->shape.block[0], e->shape.block[1],
                 e->shape.block[2]);
        jw_str(w, "block", dims);
        jw_u64(w, "shared_bytes", e->shape.smem);
    }
    jw_str(w, "mangled", mangled);
    jw_close(w);
    jw_close(w);
}

int trace_write(FILE *f, const struct trace *t, const char *(*kernel_name)(uint32_t id),
                const char *version)
{
    struct name_entry *names = NULL, *ne, *ntmp;
    struct track *tracks = NULL, *tr, *ttmp;
    uint64_t t0 = UINT64_MAX;
    uint32_t ntracks = 0;
    uint64_t named[4] = { 0 }; /* devices 0..255 whose process already has its name */
    char tool[128];
    struct jw w;
    int rc = 0;

    for (uint64_t i = 0; i < t->n; i++)
        if (ev_at(t, i)->ts_ns < t0)
            t0 = ev_at(t, i)->ts_ns;
    jw_init(&w, f);
    jw_open(&w, NULL, '{', JW_TIGHT, 0, 0);
    jw_str(&w, "displayTimeUnit", "ns");
    jw_break(&w, 1);
    jw_open(&w, "otherData", '{', JW_TIGHT, 0, 0);
    snprintf(tool, sizeof tool, "ktime %s", version);
    jw_str(&w, "tool", tool);
    jw_u64(&w, "events", t->n);
    jw_u64(&w, "dropped", t->dropped);
    jw_u64(&w, "unplaced", t->unplaced);
    jw_close(&w);
    jw_break(&w, 1);
    jw_open(&w, "traceEvents", '[', JW_BLOCK, 2, 1);
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
            track_names(&w, e, tr->tid, named);
        }
        kernel_event(&w, e, ne->shown ? ne->shown : mangled, mangled, tr->tid, t0);
    }
    jw_close(&w);
    jw_close(&w);
    fputc('\n', f);
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
