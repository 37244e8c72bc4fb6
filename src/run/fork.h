/* fork.h - what a child made by fork() does: pass everything through, report nothing. */
#ifndef KTIME_FORK_H
#define KTIME_FORK_H

/* Installs the fork handler. Called once by the constructor. */
void fork_register(void);

#endif
