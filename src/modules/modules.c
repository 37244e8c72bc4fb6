/* modules.c - the registry of feature modules: the list of modules.def, and each moment
 * called on every module that is on, in the list's order. */
#include "ac_config.h" /* autoconf: _GNU_SOURCE */
#include "modules.h"

#include "cuptitimer.h"
#include "state.h"

#define MODULE(name) extern const struct ktime_module name##_module;
#include "modules.def"
#undef MODULE

static const struct ktime_module *const all[] = {
#define MODULE(name) &name##_module,
#include "modules.def"
#undef MODULE
};

#define NMODULES (sizeof all / sizeof all[0])

/* Whether each module is on: set at start-up, before any other thread runs, read after. */
static bool on[NMODULES];

#define EACH(m) for (size_t i_ = 0; i_ < NMODULES; i_++) \
                    for (const struct ktime_module *m = all[i_]; m && on[i_]; m = NULL)

static void sample_all(const struct drain_out *o)
{
    EACH(m)
        if (m->sample)
            m->sample(o);
}

static void record_all(const struct hw_out *o)
{
    EACH(m)
        if (m->record)
            m->record(o);
}

void modules_start(void)
{
    bool samples = false, records = false;

    for (size_t i = 0; i < NMODULES; i++) {
        on[i] = !all[i]->start || all[i]->start();
        samples = samples || (on[i] && all[i]->sample);
        records = records || (on[i] && all[i]->record);
    }
    /* The drain hands every folded sample, and the CUPTI timer every record, to the modules
     * that read them; to none (no call at all) when no module does. */
    kt.drain.record = samples ? sample_all : NULL;
    cuptitimer_records()->record = records ? record_all : NULL;
}

void modules_first_launch(void)
{
    EACH(m)
        if (m->first_launch)
            m->first_launch();
}

void modules_pool_made(struct pool *p, CUdevice dev)
{
    EACH(m)
        if (m->pool_made)
            m->pool_made(p, dev);
}

void modules_pool_ending(struct pool *p)
{
    EACH(m)
        if (m->pool_ending)
            m->pool_ending(p);
}

void modules_stop(struct module_end *e)
{
    EACH(m)
        if (m->stop)
            m->stop(e);
}

void modules_end(struct module_end *e, struct report *r)
{
    EACH(m)
        if (m->end)
            m->end(e, r);
}

void modules_header(struct report *r)
{
    EACH(m)
        if (m->header)
            m->header(r);
}

void modules_entry(uint32_t id, struct report_kernel *part)
{
    EACH(m)
        if (m->entry)
            m->entry(id, part);
}

int modules_rows(struct report *r, const struct module_rows *mr)
{
    EACH(m)
        if (m->rows && m->rows(r, mr) != 0)
            return -1;
    return 0;
}

bool modules_ticking(void)
{
    EACH(m)
        if (m->tick)
            return true;
    return false;
}

void modules_tick(const struct module_tick *t)
{
    EACH(m)
        if (m->tick)
            m->tick(t);
}

void modules_report_written(struct report *r, long wait_ms)
{
    EACH(m)
        if (m->report_written)
            m->report_written(r, wait_ms);
}

void modules_reset(void)
{
    EACH(m)
        if (m->reset)
            m->reset();
}

void modules_after_report(const struct module_end *e)
{
    EACH(m)
        if (m->after_report)
            m->after_report(e);
}
