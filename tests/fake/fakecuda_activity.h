/* fakecuda_activity.h - how the fake driver (fakecuda.c) reports executed kernels to the fake
 * CUPTI (fakecupti.c). Test-only: the one export of the fake libcuda.so.1 that is not a driver
 * entry point. See tests/fake/README.md, "The fake CUPTI".
 */
#ifndef FAKECUDA_ACTIVITY_H
#define FAKECUDA_ACTIVITY_H

#include <stdint.h>

#define FAKECUDA_ACTIVITY_VERSION 1

/* One kernel that ran: a launch that succeeded and was not captured, or a kernel node of a
 * graph launch. Times are the stream's simulated clock in ns (README, "Simulated time"). */
struct fakecuda_kernel_activity {
    uint32_t size;            /* sizeof (struct fakecuda_kernel_activity) in the driver */
    uint32_t device_id;       /* device ordinal of the stream's context */
    uint32_t context_id;      /* what cuCtxGetId returns for that context */
    uint32_t stream_id;       /* what cuStreamGetId returns for the stream */
    uint32_t correlation_id;  /* of the launch call (one per call); graph nodes: the cuGraphLaunch's */
    uint32_t graph_id;        /* graph nodes: id of the CUgraph the exec was instantiated from; else 0 */
    uint64_t graph_node_id;   /* graph nodes: the node's id; else 0 */
    uint64_t start_ns;        /* the stream clock before the kernel */
    uint64_t end_ns;          /* ... and after it: end_ns - start_ns is its simulated duration */
    const char *name;         /* the kernel's (mangled) name; valid for the life of the process */
    int32_t grid_x, grid_y, grid_z;
    int32_t block_x, block_y, block_z;
    int32_t dynamic_shared_memory;  /* sharedMemBytes of the launch (or of the kernel node) */
    uint8_t launch_type;      /* CUpti_ActivityLaunchType: 0 regular, 1 cooperative (one device) */
};

/* Called by the driver for every kernel that runs, on the launching thread, outside the
 * driver's lock, before the launch call returns (graph launches: once per kernel node, in node
 * order). May be called from many threads at once. */
typedef void (*fakecuda_activity_fn)(const struct fakecuda_kernel_activity *k, void *arg);

/* Exported by the fake libcuda.so.1: sets the one sink (NULL: none), replacing any earlier one.
 * Returns FAKECUDA_ACTIVITY_VERSION. Any thread. When it returns, no call of the old sink is
 * running any more (but one on the calling thread, or one stuck for over 2 s), so the code it
 * pointed to may be unloaded. */
int fakecuda_set_activity_sink(fakecuda_activity_fn fn, void *arg);
typedef int (*fakecuda_set_activity_sink_t)(fakecuda_activity_fn fn, void *arg);

#endif
