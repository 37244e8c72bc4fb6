/* fakecupti_unit.h - the state of the unit tests' fake libcupti (fakecupti_unit.c), which
 * test_cupti.c reaches with dlsym in the same loaded object ktime's CUPTI timer uses. */
#ifndef KTIME_FAKECUPTI_UNIT_H
#define KTIME_FAKECUPTI_UNIT_H

#include <stddef.h>
#include <stdint.h>

#include <cupti.h>

struct fcu {
    /* What ktime registered and called. */
    CUpti_BuffersCallbackRequestFunc request;
    CUpti_BuffersCallbackCompleteFunc complete;
    int registrations, enables, disables, flushes, forced_flushes, flush_periods;
    /* What the fake answers. */
    size_t dropped_next;     /* cuptiActivityGetNumDroppedRecords: this, once */
    uint32_t context_id;     /* cuptiGetContextId */
    uint32_t stream_id;      /* cuptiGetStreamIdEx */
    /* The buffer being filled: taken from ktime at the first record after a completion. */
    uint8_t *buf;
    size_t size, used;
    uint64_t refused;        /* records that found no buffer (ktime gave none) */
};

/* The fake's state (dlsym "fcu_state"). */
typedef struct fcu *(*fcu_state_fn)(void);

/* Adds a kernel record (dlsym "fcu_record"): name, device, context and stream ids, start and
 * end (ns), graph id (0: not a graph node). */
typedef void (*fcu_record_fn)(const char *name, uint32_t device, uint32_t context_id,
                              uint32_t stream_id, uint64_t start, uint64_t end,
                              uint32_t graph_id);

/* Hands the buffer being filled back to ktime (dlsym "fcu_complete"), as CUPTI does when a
 * buffer is full or flushed. */
typedef void (*fcu_complete_fn)(void);

#endif
