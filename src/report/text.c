/* text.c - the report model as the human-readable table (docs/text-format.md): the header,
 * the kernels' rows and the footer; the sections between them are text_sections.c's. */
#include "ac_config.h" /* autoconf: _GNU_SOURCE */
#include "text.h"

#include <string.h>

#include "names.h"

/* ---- the header ---- */

static void text_who(FILE *f, const struct model *m)
{
    const char *source = m->timer.kind == RM_CUPTI  ? "CUPTI activity records"
                         : m->timer.kind == RM_BOTH ? "CUDA events and CUPTI activity records"
                                                     : "CUDA events";

    if (m->build && *m->build)
        fprintf(f, "ktime %s (git %s): GPU time per kernel, from %s\n", m->version, m->build,
                source);
    else
        fprintf(f, "ktime %s: GPU time per kernel, from %s\n", m->version, source);
    fprintf(f, "command  ");
    for (int i = 0; i < m->argc; i++) {
        fputs(i ? " " : "", f);
        report_put_escaped(f, m->argv[i]);
    }
    fputc('\n', f);
    if (m->merged) {
        fprintf(f, "merged   %zu reports (ranks %s) from %zu host%s: ", m->merged->ninputs,
                m->merged->ranks_words, m->merged->nhosts, m->merged->nhosts == 1 ? "" : "s");
        report_put_escaped(f, m->merged->hosts_words);
        fputc('\n', f);
        return;
    }
    if (m->has_pid)
        fprintf(f, "pid      %ld\n", m->pid);
    else
        fprintf(f, "pid      None\n");
    if (m->host || m->rank_text) {
        fputs("host     ", f);
        report_put_escaped(f, m->host ? m->host : "unknown");
        if (m->rank_text) {
            fprintf(f, ", rank %s", m->rank_text);
            if (m->world_size > 0)
                fprintf(f, " of %ld", m->world_size);
            if (m->local_rank_text)
                fprintf(f, " (local rank %s)", m->local_rank_text);
        }
        if (m->job)
            fprintf(f, ", job %s", m->job);
        fputc('\n', f);
    }
    if (m->snapshot) {
        const struct rm_snapshot *s = m->snapshot;
        if (s->final)
            fprintf(f, "snapshot %llu, the final report (at exit)\n", (unsigned long long)s->seq);
        else
            fprintf(f, "snapshot %llu at %s, while the program runs%s%s\n",
                    (unsigned long long)s->seq, s->at ? s->at : "an unknown time",
                    s->interval_s > 0 ? "" : " (on request)",
                    s->paused ? "; timing off (ktime ctl)" : "");
        if (s->resets)
            fprintf(f, "counts   since %s (reset %llu time%s by ktime ctl)\n",
                    s->since ? s->since : "an unknown time", (unsigned long long)s->resets,
                    s->resets == 1 ? "" : "s");
    }
}

static void text_devices(FILE *f, const struct model *m)
{
    for (size_t d = 0; d < m->ndevices; d++) {
        const struct rm_device *v = &m->devices[d];
        fprintf(f, "gpu %-4d ", v->ordinal);
        report_put_escaped(f, v->name);
        fprintf(f, ", driver %s%sCUDA %ld.%ld", v->driver, *v->driver ? ", " : "",
                v->driver_version / 1000, v->driver_version % 1000 / 10);
        if (v->merged) {
            fprintf(f, " (gpu %ld of ", v->host_ordinal);
            report_put_escaped(f, v->host ? v->host : "None");
            fputc(')', f);
        }
        fputc('\n', f);
    }
    if (m->ndevices == 0)
        fprintf(f, "gpu      none timed\n");
    for (size_t d = 0; d < m->ndevices; d++) {
        const struct rm_device *v = &m->devices[d];
        if (v->floor_events_us <= 0 && v->floor_hw_us <= 0)
            continue;
        fprintf(f, "floor    gpu %d: an empty kernel reads", v->ordinal);
        if (v->floor_events_us > 0)
            fprintf(f, " %.3f us with events", v->floor_events_us);
        if (v->floor_hw_us > 0)
            fprintf(f, "%s%.3f us in hardware (CUPTI)", v->floor_events_us > 0 ? ", " : " ",
                    v->floor_hw_us);
        fprintf(f, "; a kernel under %.0fx the timer's floor is marked \"near floor\"%s\n",
                NEAR_FLOOR_FACTOR,
                m->timer.kind == RM_CUPTI
                    ? ""
                    : " (KTIME_TIMER=cupti reads it without the events' bias)");
    }
}

/* The settings that shape the samples: warmup, shapes, the L2 flush, the capture range. */
static void text_settings(FILE *f, const struct model *m)
{
    if (m->warmup == 0)
        fprintf(f, "warmup   none: every launch is timed, each kernel's first included "
                   "(KTIME_WARMUP=0)\n");
    else if (m->warmup == 1)
        fprintf(f, "warmup   the first launch of each kernel is not timed (KTIME_WARMUP)\n");
    else
        fprintf(f, "warmup   the first %ld launches of each kernel are not timed (KTIME_WARMUP)\n",
                m->warmup);
    if (m->group_shape)
        fprintf(f, "shapes   under each kernel, its timed samples by launch shape: grid, block "
                   "and\n         dynamic shared memory in bytes, the %d most timed "
                   "(KTIME_GROUP=shape)\n",
                SHAPE_SHOW);
    if (m->flush) {
        const struct rm_flush *fl = m->flush;
        fprintf(f, "cache    KTIME_FLUSH_L2: ");
        if (fl->contexts)
            fprintf(f, "%.1f MiB overwritten on the launch's stream before each timed launch,\n"
                       "         outside its interval: samples start with a cold L2 (%llu flushes",
                    (double)fl->bytes / 1048576.0, (unsigned long long)fl->flushes);
        else
            fprintf(f, "on, but no context had a scratch buffer: samples are warm (0 flushes");
        if (fl->refused)
            fprintf(f, "; %llu refused by the driver, those samples warm",
                    (unsigned long long)fl->refused);
        if (fl->without_buffer && fl->contexts)
            fprintf(f, "; no buffer in %llu of %llu contexts, their samples warm",
                    (unsigned long long)fl->without_buffer,
                    (unsigned long long)(fl->without_buffer + fl->contexts));
        fprintf(f, ")\n");
    }
    const struct rm_capture *c = m->capture;
    if (c && strncmp(c->mode, "nvtx:", 5) == 0)
        fprintf(f, "capture  KTIME_CAPTURE=%s: only launches while a range %s is open (on any "
                   "thread) are timed;\n         %llu range%s (%llu pushes, %llu pops)%s\n",
                c->mode, c->mode + 5, (unsigned long long)c->ranges, c->ranges == 1 ? "" : "s",
                (unsigned long long)c->starts, (unsigned long long)c->stops,
                c->open_at_exit ? ", the last open at exit" : "");
    else if (c)
        fprintf(f, "capture  KTIME_CAPTURE=%s: only launches between cuProfilerStart and "
                   "cuProfilerStop are timed;\n         %llu range%s (%llu starts, %llu stops)%s\n",
                c->mode, (unsigned long long)c->ranges, c->ranges == 1 ? "" : "s",
                (unsigned long long)c->starts,
                (unsigned long long)c->stops, c->open_at_exit ? ", the last open at exit" : "");
    if (m->budget) {
        fprintf(f, "budget   KTIME_BUDGET=%ld %%: ktime's estimated cost %.3f %% of the run "
                   "(%.3f ms of %.3f ms, %llu windows);\n",
                m->budget->percent, m->budget->estimated_percent, m->budget->spent_ms,
                m->budget->wall_ms, (unsigned long long)m->budget->windows);
        if (m->budget->cupti_on_1_in < 0)
            fprintf(f, "         each kernel timed at 1 in N launches, N chosen by its length "
                       "(\"sampled 1 in N\")\n");
        else
            fprintf(f, "         CUPTI's kernel records on 1/%ld of the time at the end; %llu "
                       "launches made while\n         they were off not timed (\"sampled 1 in "
                       "N\")\n", m->budget->cupti_on_1_in,
                    (unsigned long long)m->budget->unrecorded);
    }
}

/* Which launches an event pair brackets: every one, or one in K drawn (KTIME_SAMPLE). */
static void text_which(FILE *f, const struct model *m)
{
    if (m->totals.has_sample && m->totals.sample > 1)
        fprintf(f, "around one launch in %ld after warmup,\n         drawn at random "
                   "(KTIME_SAMPLE)", m->totals.sample);
    else
        fprintf(f, "around every launch");
}

/* How the samples were taken: the timer and the launch gate. */
static void text_method(FILE *f, const struct model *m)
{
    if (m->timer.kind == RM_CUPTI)
        fprintf(f, "method   CUPTI activity records: the hardware's start and end of each kernel\n"
                   "         (KTIME_TIMER=cupti); no events, no launch gate\n");
    else if (m->timer.kind == RM_BOTH) {
        fprintf(f, "method   a CUDA event pair on the launch's own stream ");
        text_which(f, m);
        fprintf(f, ",\n         and CUPTI's hardware start and end of the same kernels "
                   "(KTIME_TIMER=both):\n"
                   "         the table shows the events; their bias over the hardware is below "
                   "it\n");
    } else {
        fprintf(f, "method   a CUDA event pair on the launch's own stream ");
        text_which(f, m);
        fprintf(f, ";\n         each interval includes the GPU's grid launch latency (a few us)\n");
    }
    if (m->timer.note)
        fprintf(f, "timer    KTIME_TIMER=%s: %s\n",
                m->timer.requested ? m->timer.requested : "events", m->timer.note);
    if (m->timer.kind != RM_CUPTI || m->timer.note) {
        if (m->gate_kind == RM_GATE_AUTO)
            fprintf(f, "gate     auto: a stream that may be idle is held until the launch is "
                       "queued; on a busy\n         one each launch is checked to be queued "
                       "before its start (KTIME_GATE)\n");
        else if (m->gate_kind == RM_GATE_ON)
            fprintf(f, "gate     on: the stream is held until the launch is queued (KTIME_GATE)\n");
        else if (m->gate_kind == RM_GATE_OFF)
            fprintf(f, "gate     off: a launch reaching an idle stream also counts its submission "
                       "time\n");
        else
            fprintf(f, "gate     %s: the merged reports' KTIME_GATE differ\n", m->gate);
    }
    if (m->gate_unavailable) {
        fprintf(f, "         (KTIME_GATE=%s, but launch gates could not be set up in %llu of ",
                m->gate_requested ? m->gate_requested : m->gate,
                (unsigned long long)m->gate_unavailable);
        if (m->contexts >= 0)
            fprintf(f, "%ld", m->contexts);
        else
            fputc('?', f);
        fprintf(f, " contexts: no pinned memory; their launches were not gated)\n");
    }
    text_conditions(f, m->cond);
    fputc('\n', f);
}

void text_conditions(FILE *f, const struct rm_cond *c)
{
    for (size_t i = 0; c && i < c->ntext; i++)
        fprintf(f, "%s\n", c->text[i]);
}

/* ---- the rows ---- */

/* A sub-row's columns up to its label: a GPU's or a launch shape's samples. */
static void text_part(FILE *f, const struct rm_stats *s)
{
    fprintf(f, "%7.2f %12.3f %9s %7s %9llu %11.3f ", s->v[RS_PERCENT], s->v[RS_TOTAL], "", "",
            (unsigned long long)s->timed, s->v[RS_MEAN]);
    text_quantiles(f, s, "");
    fprintf(f, "%11.3f %11.3f %11.3f    ", s->v[RS_MIN], s->v[RS_MAX], s->v[RS_STDDEV]);
}

static void text_shape(FILE *f, const struct rm_shape *s)
{
    text_part(f, &s->st);
    fprintf(f, "grid %ux%ux%u block %ux%ux%u smem %u\n", s->grid[0], s->grid[1], s->grid[2],
            s->block[0], s->block[1], s->block[2], s->smem);
}

static void text_row(FILE *f, const struct model *m, const struct rm_row *w)
{
    const struct rm_stats *s = &w->st;

    if (s->timed > 0) {
        fprintf(f, "%7.2f %12.3f %9llu %7llu %9llu %11.3f ", s->v[RS_PERCENT], s->v[RS_TOTAL],
                (unsigned long long)w->n[RC_CALLS], (unsigned long long)w->n[RC_WARMUP],
                (unsigned long long)s->timed, s->v[RS_MEAN]);
        text_quantiles(f, s, "-");
        fprintf(f, "%11.3f %11.3f %11.3f  ", s->v[RS_MIN], s->v[RS_MAX], s->v[RS_STDDEV]);
    } else {
        fprintf(f, "%7s %12s %9llu %7llu %9llu %11s %11s %11s %11s %11s %11s  ", "-", "-",
                (unsigned long long)w->n[RC_CALLS], (unsigned long long)w->n[RC_WARMUP], 0ULL,
                "-", "-", "-", "-", "-", "-");
    }
    report_put_escaped(f, w->short_name);
    if (w->ref)
        fprintf(f, " [%d]", w->ref);
    text_notes(f, w);
    fputc('\n', f);
    /* A kernel that ran on several GPUs gets one line per GPU under it. */
    for (size_t d = 0; w->ndev > 1 && d < w->ndev; d++) {
        text_part(f, &w->dev[d].st);
        fprintf(f, "on gpu %d\n", w->dev[d].device);
    }
    if (!m->group_shape)
        return;
    for (size_t i = 0; i < w->nshapes; i++)
        text_shape(f, &w->shapes[i]);
    if (w->other && w->other->st.timed) {
        text_part(f, &w->other->st);
        if (w->other->untracked) /* more shapes than were told apart: their number is unknown */
            fprintf(f, "other shapes (over %llu)\n", (unsigned long long)w->other->shapes);
        else
            fprintf(f, "%llu other shapes\n", (unsigned long long)w->other->shapes);
    }
}

/* ---- the footer ---- */

/* The launches line and what it leaves out: drops, ungated, CUPTI's losses, sampling. */
static void text_launches(FILE *f, const struct model *m)
{
    const uint64_t *t = m->totals.n;
    /* Under the CUPTI timer a graph's kernel runs are rows' samples, counted with the
     * launches; with both timers the rows are the events', and those runs only CUPTI's. */
    bool hw_rows = m->timer.kind == RM_CUPTI;

    if (t[RT_IN_GRAPH])
        fprintf(f, "graphs   %llu kernel runs inside CUDA graphs, from CUPTI's records (%s)\n",
                (unsigned long long)t[RT_IN_GRAPH],
                hw_rows ? "counted below with the launches"
                        : "in the hardware's columns only, not counted below");
    fprintf(f, "launches %llu seen: %llu timed, ",
            (unsigned long long)(t[RT_LAUNCHES] + (hw_rows ? t[RT_IN_GRAPH] : 0)),
            (unsigned long long)t[RT_TIMED]);
    if (t[RT_UNSAMPLED])
        fprintf(f, "%llu not sampled, ", (unsigned long long)t[RT_UNSAMPLED]);
    if (t[RT_BY_NODES])
        fprintf(f, "%llu graph launches timed by their kernel nodes, ",
                (unsigned long long)t[RT_BY_NODES]);
    if (m->capture)
        fprintf(f, "%llu outside range, ", (unsigned long long)t[RT_OUTSIDE]);
    if (t[RT_PAUSED])
        fprintf(f, "%llu paused, ", (unsigned long long)t[RT_PAUSED]);
    fprintf(f, "%llu warmup, %llu captured, %llu dropped, %llu failed, %llu incomplete at exit\n",
            (unsigned long long)t[RT_WARMUP], (unsigned long long)t[RT_CAPTURED],
            (unsigned long long)t[RT_DROPPED], (unsigned long long)t[RT_FAILED],
            (unsigned long long)t[RT_INCOMPLETE]);
    if (t[RT_DROPPED]) {
        fprintf(f, "dropped ");
        for (int i = 0; i < RM_NDROPS; i++)
            fprintf(f, "%s %s %llu", i ? "," : "", rm_drop_key[i],
                    (unsigned long long)m->totals.drops[i]);
        fputc('\n', f);
    }
    if (t[RT_UNGATED] && m->gate_kind != RM_GATE_OFF)
        fprintf(f, "ungated  %llu of the timed launches found the GPU behind (or were a "
                   "kernel's first)\n", (unsigned long long)t[RT_UNGATED]);
    if (m->timer.records_dropped || m->timer.buffers_refused)
        fprintf(f, "cupti    %llu records dropped by CUPTI; %llu times no free buffer "
                   "(KTIME_CUPTI_BUFFER_MB)\n", (unsigned long long)m->timer.records_dropped,
                (unsigned long long)m->timer.buffers_refused);
    if (hw_rows && t[RT_CUPTI_TIMED] < t[RT_TIMED])
        fprintf(f, "timers   %llu of the timed launches from CUPTI's records, %llu with CUDA "
                   "events (after the hand-over)\n", (unsigned long long)t[RT_CUPTI_TIMED],
                (unsigned long long)(t[RT_TIMED] - t[RT_CUPTI_TIMED]));
}

static void text_footer(FILE *f, const struct model *m)
{
    uint64_t unsampled = m->totals.n[RT_UNSAMPLED];

    fputc('\n', f);
    text_launches(f, m);
    if (unsampled && m->budget) {
        fprintf(f, "sampled  %llu launches after warmup not timed (KTIME_BUDGET); Total ms and "
                   "Time%% are estimates, each sample counted as the launches it stands for\n",
                (unsigned long long)unsampled);
    } else if (unsampled) {
        fprintf(f, "sampled  about 1 in ");
        if (m->totals.has_sample)
            fprintf(f, "%ld", m->totals.sample);
        else
            fputc('?', f);
        fprintf(f, " launches timed after warmup (KTIME_SAMPLE): %llu not timed; Total ms and "
                   "Time%% are estimates, mean x launches\n", (unsigned long long)unsampled);
    }
    fprintf(f, "%s %.3f ms in all\n", unsampled ? "total   ~" : "timed   ",
            m->totals.timed_total_ms);
    if (m->note)
        fprintf(f, "note     %s\n", m->note);
}

int model_write_text(FILE *f, const struct model *m)
{
    text_who(f, m);
    text_devices(f, m);
    text_settings(f, m);
    text_method(f, m);
    fprintf(f, "%7s %12s %9s %7s %9s %11s %11s %11s %11s %11s %11s  %s\n", "Time%", "Total ms",
            "Calls", "Warmup", "Timed", "Mean us", "Med us", "p99 us", "Min us", "Max us",
            "Stddev us", "Kernel");
    for (size_t i = 0; i < m->nrows; i++)
        text_row(f, m, &m->rows[i]);
    if (m->nrows_all == 0)
        fprintf(f, "(no kernel launches)\n");
    if (m->shown)
        fputs(m->shown, f);
    if (m->has_refs) {
        fprintf(f, "\nFull names\n");
        for (size_t i = 0; i < m->nrows; i++)
            if (m->rows[i].ref) {
                fprintf(f, "[%d] ", m->rows[i].ref);
                report_put_escaped(f, m->rows[i].name);
                fputc('\n', f);
            }
    }
    if (m->merged)
        text_spread(f, m);
    if (m->balance)
        text_balance(f, m->balance);
    if (m->timer.kind == RM_BOTH)
        text_bias(f, m);
    text_launch_table(f, m);
    text_memops(f, m);
    text_ranges(f, m);
    text_busy(f, m);
    text_comm(f, m);
    text_footer(f, m);
    if (fflush(f) != 0 || ferror(f))
        return -1;
    return 0;
}
