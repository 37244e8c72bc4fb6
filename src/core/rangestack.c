/* rangestack.c - named ranges (NVTX, ktime_range_push/pop) and the launches' attribution to them. */
#include "ac_config.h" /* autoconf: _GNU_SOURCE, PACKAGE_VERSION */
#include "rangestack.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

struct range_stats range_stats;
void (*_Atomic range_watch)(uint32_t id, uint64_t open_now, bool push);

/* slots[RANGE_SLOTS] is the overflow entry. */
static struct range_entry slots[RANGE_SLOTS + 1];
static _Atomic int outermost;
/* The name of a slot whose name could not be copied (out of memory). */
static char no_name[] = "(out of memory)";

struct range_stack {
    uint32_t depth;                 /* ranges open, deeper than RANGE_DEPTH included */
    uint16_t id[RANGE_DEPTH];       /* 1-based ids of the first RANGE_DEPTH */
    uint64_t t0[RANGE_DEPTH];       /* their push times, CLOCK_MONOTONIC ns */
};

static __thread struct range_stack stack __attribute__((tls_model("initial-exec")));

_Static_assert(RANGE_SLOTS + 1 <= UINT16_MAX, "range ids fit 16 bits");

void range_set_outermost(bool on)
{
    atomic_store(&outermost, on);
}

static uint64_t now_ns(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* FNV-1a, never 0. */
static uint64_t hash_of(const char *s)
{
    uint64_t h = 1469598103934665603ULL;

    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h ? h : 1;
}

uint32_t range_intern(const char *name)
{
    uint64_t h;
    uint32_t i;

    if (!name)
        name = "(unnamed)";
    h = hash_of(name);
    for (uint32_t probe = 0; probe < RANGE_SLOTS; probe++) {
        i = (uint32_t)(h + probe) & (RANGE_SLOTS - 1);
        uint64_t cur = atomic_load_explicit(&slots[i].hash, memory_order_acquire);
        if (cur == 0) {
            if (atomic_load_explicit(&range_stats.names, memory_order_relaxed) >= RANGE_MAX)
                break;
            if (!atomic_compare_exchange_strong(&slots[i].hash, &cur, h)) {
                if (cur != h)
                    continue; /* another name took it */
            } else {
                char *copy = strdup(name);
                if (!copy) {
                    /* The slot stays taken by a name nobody matches (the threads waiting for
                     * it move on), and never shown: it has no range. */
                    atomic_store_explicit(&slots[i].name, no_name, memory_order_release);
                    return 0;
                }
                atomic_store_explicit(&slots[i].name, copy, memory_order_release);
                atomic_fetch_add(&range_stats.names, 1);
                return i + 1;
            }
        }
        if (cur == h) {
            const char *n;
            /* Its inserter is copying the name: a few instructions. */
            while (!(n = atomic_load_explicit(&slots[i].name, memory_order_acquire)))
                ;
            if (n != no_name && strcmp(n, name) == 0)
                return i + 1;
        }
    }
    return RANGE_OTHER + 1;
}

static void watch(uint32_t id, uint64_t open_now, bool push)
{
    void (*w)(uint32_t, uint64_t, bool) = atomic_load_explicit(&range_watch, memory_order_acquire);

    if (w)
        w(id, open_now, push);
}

void range_push_id(uint32_t id)
{
    struct range_stack *s = &stack;

    atomic_fetch_add_explicit(&range_stats.pushes, 1, memory_order_relaxed);
    if (s->depth < RANGE_DEPTH) {
        s->id[s->depth] = (uint16_t)id;
        s->t0[s->depth] = now_ns();
        if (id)
            watch(id, atomic_fetch_add_explicit(&slots[id - 1].open, 1, memory_order_relaxed) + 1,
                  true);
    } else {
        atomic_fetch_add_explicit(&range_stats.too_deep, 1, memory_order_relaxed);
    }
    s->depth++;
}

bool range_pop(void)
{
    struct range_stack *s = &stack;

    if (s->depth == 0) {
        atomic_fetch_add_explicit(&range_stats.unmatched_pops, 1, memory_order_relaxed);
        return false;
    }
    s->depth--;
    if (s->depth < RANGE_DEPTH && s->id[s->depth]) {
        struct range_entry *e = &slots[s->id[s->depth] - 1];
        atomic_fetch_add_explicit(&e->wall_ns, now_ns() - s->t0[s->depth], memory_order_relaxed);
        atomic_fetch_add_explicit(&e->pushes, 1, memory_order_relaxed);
        watch(s->id[s->depth], atomic_fetch_sub_explicit(&e->open, 1, memory_order_relaxed) - 1,
              false);
    }
    return true;
}

uint32_t range_current(void)
{
    const struct range_stack *s = &stack;
    uint32_t d = s->depth < RANGE_DEPTH ? s->depth : RANGE_DEPTH;

    if (d == 0)
        return 0;
    return atomic_load_explicit(&outermost, memory_order_relaxed) ? s->id[0] : s->id[d - 1];
}

const struct range_entry *range_entry_of(uint32_t id)
{
    return id >= 1 && id <= RANGE_SLOTS + 1 ? &slots[id - 1] : NULL;
}

const char *range_name_of(uint32_t id)
{
    if (id == RANGE_OTHER + 1)
        return "(other ranges)";
    const struct range_entry *e = range_entry_of(id);
    return e ? e->name : NULL;
}

bool range_any(void)
{
    return atomic_load_explicit(&range_stats.pushes, memory_order_relaxed) > 0;
}

static _Atomic int nvtx_tool;

void range_note_nvtx_tool(void)
{
    atomic_store(&nvtx_tool, 1);
}

bool range_nvtx_tool(void)
{
    return atomic_load(&nvtx_tool);
}
