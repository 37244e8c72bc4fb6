/* exec.h - the exec family's wrappers (exec.c): the report is written before the process
 * image is replaced. */
#ifndef KTIME_EXEC_H
#define KTIME_EXEC_H

/* libktime's wrapper of the exec-family function name (execve, execv, execvp, execvpe,
 * fexecve, execveat, execl, execlp, execle), or NULL: for dlsym(RTLD_NEXT) from an object
 * whose next is libktime. No allocation, no libc call (dlsym's own constraints). */
void *exec_own_export(const char *name);

#endif
