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

/* The keys, indexed by the enums above. */
extern const char *const rm_count_key[RM_NCOUNTS];
extern const char *const rm_stat_key[RM_NSTATS];
extern const char *const rm_total_key[RM_NTOTALS];
extern const char *const rm_drop_key[RM_NDROPS];
extern const char *const rm_reason_key[RM_NREASONS];

/* The quantiles the report gives (p50, p90, p99) and their statistics' index. */
#define RM_NQ 3
extern const double rm_q[RM_NQ];

#endif
