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
    /* Launch records and external correlation ids (the launches' ranges). */
    int driver_api_on;       /* driver entry points that make records (kind on, switch on) */
    int runtime_api_on;      /* runtime entry points likewise */
    int pushes, pops, depth; /* cuptiActivityPush/PopExternalCorrelationId calls, and depth */
    uint64_t popped;         /* the id the last pop took, for fcu_launch */
    int have_popped;         /* an id was popped since the last fcu_launch */
    int ext_kind;            /* the external correlation kind ktime pushed */
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

/* Adds a kernel record with its correlation id (dlsym "fcu_record_corr"). */
typedef void (*fcu_record_corr_fn)(const char *name, uint32_t device, uint32_t context_id,
                                   uint32_t stream_id, uint32_t corr, uint64_t start,
                                   uint64_t end, uint32_t graph_id);

/* Adds the records CUPTI makes for a launch call of correlation id corr that ran from start to
 * end (dlsym "fcu_launch"): the external correlation record of the id popped since the last
 * fcu_launch (if any), then the launch (driver API) record. */
typedef void (*fcu_launch_fn)(uint32_t corr, uint64_t start, uint64_t end);

/* Adds a copy record (dlsym "fcu_copy"). */
typedef void (*fcu_copy_fn)(uint32_t device, uint32_t stream_id, uint64_t start, uint64_t end);

/* Hands the buffer being filled back to ktime (dlsym "fcu_complete"), as CUPTI does when a
 * buffer is full or flushed. */
typedef void (*fcu_complete_fn)(void);

#endif
