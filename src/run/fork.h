/* fork.h - what a child made by fork() does: off (pass everything through, report nothing)
 * when its parent used CUDA through ktime; else timed afresh, under its own pid. */
#ifndef KTIME_FORK_H
#define KTIME_FORK_H

#include <stdbool.h>

/* Installs the fork handler. Called once by the constructor. */
void fork_register(void);

/* Whether this process is a forked child that ktime started afresh in (its parent had used
 * nothing of ktime's timing): it times its own launches and writes its own report, and says
 * at KTIME_LOG=info only that it launched nothing. Any thread. */
bool fork_rearmed(void);

#endif
