/* memop.h - memory operations (copies and sets), timed apart from kernels: what kind a driver
 * call is, how many bytes it moves, and its bracketing, by the same rules as a launch (warmup,
 * pool, capture, gate, range, KTIME_SAMPLE). Each kind is one row of the kernel table, under a
 * key no driver handle can have (MEMOP_KEY), bracketed by launch_begin()/launch_end() as a
 * launch is; the report shows those rows in their own section. */
#ifndef KTIME_MEMOP_H
#define KTIME_MEMOP_H

#include <stdbool.h>
#include <stdint.h>

#include <cuda.h>

#include "launch.h"

/* The kinds, as Nsight Systems' memory summary names them. */
enum memop_kind {
    MEMOP_HTOD,   /* host to device */
    MEMOP_DTOH,   /* device to host */
    MEMOP_DTOD,   /* device to device, on one device */
    MEMOP_HTOH,   /* host to host, through the driver */
    MEMOP_PEER,   /* device to device, between devices or contexts */
    MEMOP_MEMSET, /* device memory set to a value */
    MEMOP_NKINDS
};

/* Kernel-table key of kind k: below any address, above 0 (empty) and KTAB_RETIRED (1). */
#define MEMOP_KEY_BASE 16u
#define MEMOP_KEY(k) ((uintptr_t)MEMOP_KEY_BASE + (uintptr_t)(k))
#define MEMOP_IS_KEY(key) ((key) >= MEMOP_KEY_BASE && (key) < MEMOP_KEY_BASE + MEMOP_NKINDS)

/* One call: its kind, its bytes, and whether the call itself may wait for the stream (a
 * synchronous copy, or an asynchronous one from or to pageable host memory), which must
 * never be held behind a launch gate. */
struct memop {
    int kind;
    uint64_t bytes;
    bool blocking;
};

/* "HtoD", "DtoH", "DtoD", "HtoH", "peer", "memset"; NULL for no kind. */
const char *memop_label(int kind);

/* The kind of a table key made by MEMOP_KEY, or -1. */
int memop_kind_of_key(uintptr_t key);

/* Whether a memory operation should be looked at: ktime is timing (or writing its report), the
 * call is not ktime's own, and KTIME_MEMOPS is on. Inline: the whole cost when it is off. */
static inline bool memop_wanted(void)
{
    int phase = atomic_load_explicit(&kt.phase, memory_order_acquire);

    return (phase == PHASE_ON || phase == PHASE_EXITING) && !inside_ktime && kt.cfg.memops;
}

/* Classifiers, called by the wrappers once memop_wanted() said yes. `async`: the stream form.
 * Those that must know where a pointer lives ask the driver (cuPointerGetAttributes). */
struct memop memop_1d(int kind, uint64_t bytes, int async, const void *host);
struct memop memop_any(CUdeviceptr dst, CUdeviceptr src, uint64_t bytes, int async);
struct memop memop_peer(CUcontext dst, CUcontext src, uint64_t bytes, int async);
struct memop memop_2d(const CUDA_MEMCPY2D *p, int async);
struct memop memop_3d(const CUDA_MEMCPY3D *p, int async);
struct memop memop_set(uint64_t width, uint64_t elem, uint64_t height, int async);

/* The bytes of the memory operations that succeeded, by kind, warmup included (memop.c owns
 * them; memop_count() adds to them inline). */
extern _Atomic uint64_t memop_bytes[MEMOP_NKINDS];

/* After the real call: m's bytes, when it succeeded, to its kind's count (warmup included). */
static inline void memop_count(const struct memop *m, CUresult r)
{
    if (r == CUDA_SUCCESS)
        atomic_fetch_add_explicit(&memop_bytes[m->kind], m->bytes, memory_order_relaxed);
}

#endif
