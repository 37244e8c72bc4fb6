/* modules.h - the registry of feature modules (modules.def): the lifecycle calls each moment
 * of module.h on every module, in the registry's order, through these functions. Never on
 * the launch path. */
#ifndef KTIME_MODULES_H
#define KTIME_MODULES_H

#include "module.h"

/* Starts every module (module.h: start); remembers which stayed off. The constructor, once,
 * after the settings and the drain; the unit tests' fixture, once per test. */
void modules_start(void);

/* The other moments, for the modules that are on. */
void modules_first_launch(void);
void modules_pool_made(struct pool *p, CUdevice dev);
void modules_pool_ending(struct pool *p);
void modules_stop(struct module_end *e);
void modules_end(struct module_end *e, struct report *r);
void modules_header(struct report *r);
void modules_entry(uint32_t id, struct report_kernel *part);
/* Returns 0, or -1 as soon as a module's rows() fails. */
int modules_rows(struct report *r, const struct module_rows *m);
void modules_after_report(const struct module_end *e);

#endif
