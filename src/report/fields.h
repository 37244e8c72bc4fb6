/* fields.h - the report's field names, declared once: each list gives a field's enum name
 * and its key in the JSON (and the CSV's header, where it has a column). The JSON writer,
 * the CSV header and the JSON reader all take the names from here. */
#ifndef KTIME_FIELDS_H
#define KTIME_FIELDS_H

/* A row's counts. The first twelve (and timed, after incomplete) are the CSV's columns in
 * this order. */
#define RM_COUNTS(X)                    \
    X(CALLS, "calls")                   \
    X(WARMUP, "warmup_skipped")         \
    X(CAPTURED, "captured")             \
    X(DROPPED, "dropped")               \
    X(FAILED, "failed")                 \
    X(INCOMPLETE, "incomplete")         \
    X(UNGATED, "ungated")               \
    X(UNSAMPLED, "unsampled")           \
    X(BY_NODES, "timed_by_nodes")       \
    X(IN_GRAPH, "in_graph")             \
    X(CUPTI_TIMED, "cupti_timed")       \
    X(OUTSIDE, "outside_range")         \
    X(BYTES, "bytes")                   \
    X(TIMED_BYTES, "timed_bytes")       \
    X(PAUSED, "paused")

/* The statistics of a block of samples, in the order a shape's or a range's row gives them
 * in the JSON. */
#define RM_STATS(X)                     \
    X(TOTAL, "total_ms")                \
    X(PERCENT, "percent")               \
    X(MEAN, "mean_us")                  \
    X(MIN, "min_us")                    \
    X(MAX, "max_us")                    \
    X(STDDEV, "stddev_us")              \
    X(SUM, "sum_us")                    \
    X(M2, "m2_us2")                     \
    X(P50, "p50_us")                    \
    X(P90, "p90_us")                    \
    X(P99, "p99_us")

/* The totals' counts, in the JSON's order (dropped_reasons follows dropped). */
#define RM_TOTALS(X)                    \
    X(LAUNCHES, "launches_seen")        \
    X(TIMED, "timed")                   \
    X(UNGATED, "ungated")               \
    X(WARMUP, "warmup_skipped")         \
    X(CAPTURED, "captured")             \
    X(DROPPED, "dropped")               \
    X(FAILED, "failed_launches")        \
    X(INCOMPLETE, "incomplete_at_exit") \
    X(IN_GRAPH, "in_graph")             \
    X(BY_NODES, "timed_by_nodes")       \
    X(CUPTI_TIMED, "cupti_timed")       \
    X(UNSAMPLED, "unsampled")           \
    X(OUTSIDE, "outside_range")         \
    X(PAUSED, "paused")

/* Why launches passed through untimed (report.h's enum report_drop, in its order). */
#define RM_DROPS(X)                     \
    X(POOL, "pool_exhausted")           \
    X(EVENT, "event_error")             \
    X(NO_CONTEXT, "no_context")         \
    X(TABLE_FULL, "table_full")         \
    X(SHUTDOWN, "shutdown")             \
    X(GATE_TIMEOUT, "gate_timeout")     \
    X(GATE_LATE, "gate_late")

/* NVML's clock event ("throttle") reasons, bit i of its mask being reason i. */
#define RM_REASONS(X)                   \
    X(GPU_IDLE, "gpu_idle")             \
    X(APP_CLOCKS, "app_clocks")         \
    X(SW_POWER_CAP, "sw_power_cap")     \
    X(HW_SLOWDOWN, "hw_slowdown")       \
    X(SYNC_BOOST, "sync_boost")         \
    X(SW_THERMAL, "sw_thermal")         \
    X(HW_THERMAL, "hw_thermal")         \
    X(HW_POWER_BRAKE, "hw_power_brake") \
    X(DISPLAY_CLOCKS, "display_clocks")

/* A GPU's busy time (the gpu_busy section), in the JSON's order: figures, then counts. */
#define RM_BUSY(X)                      \
    X(SPAN, "span_ms")                  \
    X(BUSY, "busy_ms")                  \
    X(PERCENT, "busy_percent")          \
    X(IDLE, "idle_ms")                  \
    X(KERNEL_MS, "kernel_ms")           \
    X(COPY_MS, "copy_ms")               \
    X(CONCURRENCY, "concurrency")
#define RM_BUSY_COUNTS(X)               \
    X(KERNELS, "kernels")               \
    X(COPIES, "copies")                 \
    X(LATE, "late")                     \
    X(OTHER_STREAMS, "other_streams")

/* The idle gaps' histogram: a bin's key, and its upper edge in us (the last has none). */
#define RM_GAP_BINS(X)                  \
    X(UNDER_10US, "under_10us", 10)     \
    X(TO_100US, "10us_to_100us", 100)   \
    X(TO_1MS, "100us_to_1ms", 1000)     \
    X(TO_10MS, "1ms_to_10ms", 10000)    \
    X(TO_100MS, "10ms_to_100ms", 100000) \
    X(OVER_100MS, "100ms_and_over", 0)

/* Communication on one GPU (the communication section), in the JSON's order. */
#define RM_COMM(X)                      \
    X(COMM_MS, "comm_ms")               \
    X(COMM_BUSY, "comm_busy_ms")        \
    X(COMPUTE_BUSY, "compute_busy_ms")  \
    X(OVERLAP, "overlap_ms")            \
    X(OVERLAP_PERCENT, "overlap_percent") \
    X(EXPOSED, "exposed_ms")

/* KTIME_COMM's default pattern (communication.pattern): the kernels of NCCL, NVSHMEM, MSCCL
 * and RCCL, by mangled name in any case. */
#define RM_COMM_DEFAULT "nccl|nvshmem|msccl|rccl"

#define RM_ENUM_C(name, key) RC_##name,
#define RM_ENUM_S(name, key) RS_##name,
#define RM_ENUM_T(name, key) RT_##name,
#define RM_ENUM_D(name, key) RD_##name,
#define RM_ENUM_R(name, key) RR_##name,
enum rm_count { RM_COUNTS(RM_ENUM_C) RM_NCOUNTS };
enum rm_stat { RM_STATS(RM_ENUM_S) RM_NSTATS };
enum rm_total { RM_TOTALS(RM_ENUM_T) RM_NTOTALS };
enum rm_drop { RM_DROPS(RM_ENUM_D) RM_NDROPS };
enum rm_reason { RM_REASONS(RM_ENUM_R) RM_NREASONS };
#define RM_ENUM_B(name, key) RB_##name,
#define RM_ENUM_BC(name, key) RBC_##name,
#define RM_ENUM_G(name, key, edge) RG_##name,
#define RM_ENUM_M(name, key) RK_##name,
enum rm_busy_field { RM_BUSY(RM_ENUM_B) RM_NBUSY };
enum rm_busy_count { RM_BUSY_COUNTS(RM_ENUM_BC) RM_NBUSY_COUNTS };
enum rm_gap_bin { RM_GAP_BINS(RM_ENUM_G) RM_NGAP_BINS };
enum rm_comm_field { RM_COMM(RM_ENUM_M) RM_NCOMM };

/* The largest gaps a report names, per GPU and per stream. */
#define RM_GAP_TOP 5

/* The keys, indexed by the enums above. */
extern const char *const rm_count_key[RM_NCOUNTS];
extern const char *const rm_stat_key[RM_NSTATS];
extern const char *const rm_total_key[RM_NTOTALS];
extern const char *const rm_drop_key[RM_NDROPS];
extern const char *const rm_reason_key[RM_NREASONS];
extern const char *const rm_busy_key[RM_NBUSY];
extern const char *const rm_busy_count_key[RM_NBUSY_COUNTS];
extern const char *const rm_gap_bin_key[RM_NGAP_BINS];
extern const char *const rm_comm_key[RM_NCOMM];

/* The quantiles the report gives (p50, p90, p99) and their statistics' index. */
#define RM_NQ 3
extern const double rm_q[RM_NQ];

#endif
