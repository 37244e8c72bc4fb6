/* ktab.h - the table of launched kernels (and graphs): fixed capacity, lock-free,
 * keyed by the driver's handle. The only lookup on the launch path. */
#ifndef KTIME_KTAB_H
#define KTIME_KTAB_H

#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

enum ktab_kind { KTAB_KERNEL = 0, KTAB_GRAPH = 1, KTAB_MEMOP = 2 /* memop.h */ };

struct ktab_entry {
    alignas(64) _Atomic uintptr_t key; /* handle; 0 = empty slot */
    _Atomic(char *) name;              /* mangled name, copied once; NULL until named */
    _Atomic uint16_t kind;             /* enum ktab_kind */
    _Atomic uint16_t contexts;         /* contexts (pools) it was bracketed in */
    _Atomic uint32_t warmup;           /* launches not timed as warmup, counted where that is
                                        * decided: the first KTIME_WARMUP that did not go into
                                        * a capture, and the first in each further context */
    _Atomic uint64_t calls;            /* launches seen that did not go into a capture (the
                                        * warmup ordinal), warmup included */
    _Atomic uint64_t captured;         /* launches into a capturing stream */
    _Atomic uint64_t dropped;          /* passed through untimed: pool empty, event error */
    _Atomic uint64_t failed;           /* the launch call itself returned an error */
    _Atomic uint32_t shutdown;         /* launched while the report was being written */
    _Atomic uint8_t level;             /* KTIME_BUDGET: past its first launches, timed at a
                                        * rate of 1 in 2^level (0: every one); written by the
                                        * drain thread, read relaxed by the launch path */
};
/* One cache line: the table spans 2 x KTIME_MAX_KERNELS entries, and what each distinct
 * kernel costs in memory is the pages its entry touches. */
_Static_assert(sizeof(struct ktab_entry) == 64, "a kernel table entry is one cache line");

struct ktab {
    struct ktab_entry *slots;
    uint32_t mask;              /* slots - 1; slots is a power of two >= 2 * max */
    uint32_t max;               /* entries allowed, at most */
    _Atomic uint32_t count;     /* entries used */
    /* order[n] = 1 + id of the n-th entry inserted (0 until written): the report walks
     * the entries, not the whole table. */
    _Atomic uint32_t *order;
};

/* Allocates a table for max entries. Returns 0, or -1 when out of memory.
 * Call once, before any other thread uses t. */
int ktab_init(struct ktab *t, uint32_t max);

/* Finds the entry of key (nonzero), or creates it. *inserted is true when this call
 * created it: the caller then names it with ktab_set_name(). Returns NULL when the table
 * is full (threads inserting at the same moment may take it a few entries past max). Any thread; lock-free; never allocates. */
struct ktab_entry *ktab_get(struct ktab *t, uintptr_t key, bool *inserted);

/* Finds the entry of key without creating it; NULL when absent. Any thread; lock-free. */
struct ktab_entry *ktab_find(struct ktab *t, uintptr_t key);

/* Detaches key from its entry, so that a later ktab_get() of the same handle value (a new
 * kernel loaded where an unloaded one was) starts a new entry. The old entry keeps its
 * name and counts for the report. Returns true when key was present. */
bool ktab_retire(struct ktab *t, uintptr_t key);

/* Key value of retired entries: never a real handle. */
#define KTAB_RETIRED ((uintptr_t)1)

/* Gives e a name (copied). Called once, by the thread that inserted e. */
void ktab_set_name(struct ktab_entry *e, const char *name);

/* The n-th entry inserted (n < count), or NULL while its inserter has not yet recorded it. */
struct ktab_entry *ktab_nth(struct ktab *t, uint32_t n);

/* The entry's position: a stable small id. */
static inline uint32_t ktab_id(const struct ktab *t, const struct ktab_entry *e)
{
    return (uint32_t)(e - t->slots);
}

#endif
