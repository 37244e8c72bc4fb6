/* rangestack.h - the program's own phases: named ranges a thread pushes and pops (NVTX ranges
 * through libktime's NVTX injection, or ktime_range_push/pop), to which each timed launch is
 * attributed. Core: no CUDA. Names are interned once each in a fixed, lock-free table; the
 * stacks are per thread; a launch reads its thread's current range from thread-local memory. */
#ifndef KTIME_RANGESTACK_H
#define KTIME_RANGESTACK_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define RANGE_SLOTS 8192         /* table slots (a power of two) */
#define RANGE_MAX 4096           /* distinct names kept; later ones go to RANGE_OTHER */
#define RANGE_OTHER RANGE_SLOTS /* the id of every name past RANGE_MAX */
#define RANGE_DEPTH 64           /* ranges a thread keeps open, at most (deeper: counted only) */

/* Range id 0 is "no range"; ids 1..RANGE_SLOTS are table slots + 1... see range_name_of(). */
struct range_entry {
    _Atomic uint64_t hash;       /* the name's hash (never 0); 0: free slot */
    _Atomic(char *) name;        /* copied once, by the inserting thread; NULL until then */
    _Atomic uint64_t pushes;     /* ranges of this name closed (popped) */
    _Atomic uint64_t wall_ns;    /* their wall-clock time, summed (nested ranges: each its own) */
    _Atomic uint64_t open;       /* pushed, not yet popped (all threads) */
};

struct range_stats {
    _Atomic uint64_t unmatched_pops;  /* pops with no range open on their thread */
    _Atomic uint64_t too_deep;        /* pushes past RANGE_DEPTH (not attributed) */
    _Atomic uint32_t names;           /* distinct names interned */
    _Atomic uint64_t pushes;          /* every push */
};

extern struct range_stats range_stats;

/* Which open range a launch belongs to: the innermost (default) or the outermost. */
void range_set_outermost(bool outermost);

/* Interns name (NULL: "(unnamed)"); returns its id (1..RANGE_SLOTS, or RANGE_OTHER + 1 when
 * the table is full; 0 when out of memory). Lock-free; allocates only on a name's first sight. */
uint32_t range_intern(const char *name);

/* Pushes a range of id on the calling thread's stack, timed from now. */
void range_push_id(uint32_t id);

/* Pops the calling thread's innermost range. Returns false when none was open. */
bool range_pop(void);

/* The calling thread's current range id (0: none), as range_set_outermost() chose. */
uint32_t range_current(void);

/* The entry of an id (1..RANGE_SLOTS + 1), or NULL. */
const struct range_entry *range_entry_of(uint32_t id);

/* Its name ("(other ranges)" for the overflow id), or NULL when unused. */
const char *range_name_of(uint32_t id);

/* Whether any range was ever pushed. */
bool range_any(void);

/* Called for every push (push true) and pop of a range of id, with how many ranges of that id
 * are open now in the process: KTIME_CAPTURE=nvtx:NAME keeps its capture range with it. NULL: none. */
extern void (*_Atomic range_watch)(uint32_t id, uint64_t open_now, bool push);

/* NVTX's loader made libktime its tool (InitializeInjectionNvtx2 ran): NVTX ranges reach the
 * stacks. Set once, from the NVTX entry point. */
void range_note_nvtx_tool(void);

/* Whether range_note_nvtx_tool() was called. Any thread. */
bool range_nvtx_tool(void);

#endif
