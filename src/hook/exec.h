/* exec.h - the wrappers of the libc calls that end a process image without its exit handlers
 * (exec.c): the exec family, and _exit in a forked worker. */
#ifndef KTIME_EXEC_H
#define KTIME_EXEC_H

/* libktime's own wrapper of the libc function name (execve, execv, execvp, execvpe, fexecve,
 * execveat, execl, execlp, execle, _exit, _Exit), or NULL: for dlsym(RTLD_NEXT) from an
 * object whose next is libktime. No allocation, no libc call (dlsym's own constraints). */
void *exec_own_export(const char *name);

/* The next definition of name after libktime (libc's, for a libc function), found with libc's
 * own dlsym: no dlopen, so it may run in a constructor. NULL when there is none. */
void *exec_next_symbol(const char *name);

#endif
