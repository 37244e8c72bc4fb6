/* exec.c - the ends of a process image that run no exit handler: an exec replaces the image,
 * so the report of the launches made so far is written first (finish_image_end), then the
 * real call runs unchanged; and _exit, which a forked worker ends with, in the child ktime
 * started afresh in (fork.c). posix_spawn, system and popen start another process and leave
 * this one as it is: nothing to do there. */
#include "ac_config.h" /* autoconf: _GNU_SOURCE, PACKAGE_VERSION */

#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "dl.h"
#include "exec.h"
#include "finish.h"
#include "fork.h"
#include "lifecycle.h"
#include "state.h"

/* ---- the real functions ---- */

void *exec_next_symbol(const char *name)
{
    /* libc's own dlsym (libktime's would look through the objects after libktime with dlopen,
     * which runs constructors still due, and this runs in one): RTLD_NEXT from libktime is the
     * search after libktime. */
    return dl_sym(RTLD_NEXT, name);
}

typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*execv_fn)(const char *, char *const[]);
typedef int (*fexecve_fn)(int, char *const[], char *const[]);
typedef int (*execveat_fn)(int, const char *, char *const[], char *const[], int);
typedef void (*exit_fn)(int);

static struct {
    execve_fn execve, execvpe;
    execv_fn execv, execvp;
    fexecve_fn fexecve;
    execveat_fn execveat;
    exit_fn _exit, _Exit;
} real;

static void *next(const char *name, void *cache)
{
    void **slot = cache;
    void *f = __atomic_load_n(slot, __ATOMIC_ACQUIRE);

    if (!f) {
        f = exec_next_symbol(name);
        __atomic_store_n(slot, f, __ATOMIC_RELEASE);
    }
    return f;
}

#define REAL(name) ((__typeof__(real.name))next(#name, &real.name))

/* Resolved at start-up: a child made by vfork() shares the parent's memory and must change
 * nothing of it, and a process that calls _exit may be in no state to look them up (the
 * wrappers then only call the real function). */
__attribute__((constructor)) static void exec_init(void)
{
    REAL(execve);
    REAL(execvpe);
    REAL(execv);
    REAL(execvp);
    REAL(fexecve);
    REAL(execveat);
    REAL(_exit);
    REAL(_Exit);
}

/* ---- the exec family ---- */

/* Calls the real function, or fails as libc would without one. */
#define CALL(name, ...)                                                                    \
    do {                                                                                   \
        __typeof__(real.name) f = REAL(name);                                              \
        if (!f) {                                                                          \
            errno = ENOSYS;                                                                \
            return -1;                                                                     \
        }                                                                                  \
        finish_image_end();                                                                \
        return f(__VA_ARGS__);                                                             \
    } while (0)

/* Each wrapper is a static function exported under libc's name through an alias: its own
 * address (own[] below) is then libktime's, never another object's definition of the name
 * (a sanitizer's interceptor ahead of libktime would get itself back). */
#define EXPORT_AS(name, impl) KTIME_EXPORT __typeof__(impl) name __attribute__((alias(#impl)))

static int w_execve(const char *path, char *const argv[], char *const envp[])
{
    CALL(execve, path, argv, envp);
}

static int w_execv(const char *path, char *const argv[])
{
    CALL(execv, path, argv);
}

static int w_execvp(const char *file, char *const argv[])
{
    CALL(execvp, file, argv);
}

static int w_execvpe(const char *file, char *const argv[], char *const envp[])
{
    CALL(execvpe, file, argv, envp);
}

static int w_fexecve(int fd, char *const argv[], char *const envp[])
{
    CALL(fexecve, fd, argv, envp);
}

static int w_execveat(int dirfd, const char *path, char *const argv[], char *const envp[],
                      int flags)
{
    CALL(execveat, dirfd, path, argv, envp, flags);
}

/* The list forms collect their arguments as libc's own do (an array on the stack) and go on
 * as the vector forms. */
#define COLLECT(argv, arg, ap, extra)                                                      \
    size_t n_ = 1;                                                                         \
    va_start(ap, arg);                                                                     \
    while (va_arg(ap, const char *))                                                       \
        n_++;                                                                              \
    va_end(ap);                                                                            \
    const char *argv[n_ + 1];                                                              \
    argv[0] = arg;                                                                         \
    va_start(ap, arg);                                                                     \
    for (size_t i_ = 1; i_ <= n_; i_++)                                                    \
        argv[i_] = va_arg(ap, const char *);                                               \
    extra;                                                                                 \
    va_end(ap)

static int w_execl(const char *path, const char *arg, ...)
{
    va_list ap;
    COLLECT(argv, arg, ap, (void)0);
    CALL(execv, path, (char *const *)argv);
}

static int w_execlp(const char *file, const char *arg, ...)
{
    va_list ap;
    COLLECT(argv, arg, ap, (void)0);
    CALL(execvp, file, (char *const *)argv);
}

static int w_execle(const char *path, const char *arg, ...)
{
    va_list ap;
    char *const *envp;
    COLLECT(argv, arg, ap, envp = va_arg(ap, char *const *));
    CALL(execve, path, (char *const *)argv, envp);
}

/* ---- _exit in a forked worker ---- */

/* A worker that ends with _exit (Python's multiprocessing, most pre-fork servers) runs no
 * exit handler: its report is written here, in a child ktime started afresh in and only once
 * it launched; anywhere else _exit is passed straight through. */
static __attribute__((noreturn)) void end_now(exit_fn f, int status)
{
    if (fork_rearmed() && getpid() == kt.owner)
        finish_image_end();
    if (f)
        f(status);
    for (;;)
        syscall(SYS_exit_group, status);
}

static __attribute__((noreturn)) void w__exit(int status)
{
    end_now(REAL(_exit), status);
}

static __attribute__((noreturn)) void w__Exit(int status)
{
    end_now(REAL(_Exit), status);
}

EXPORT_AS(execve, w_execve);
EXPORT_AS(execv, w_execv);
EXPORT_AS(execvp, w_execvp);
EXPORT_AS(execvpe, w_execvpe);
EXPORT_AS(fexecve, w_fexecve);
EXPORT_AS(execveat, w_execveat);
EXPORT_AS(execl, w_execl);
EXPORT_AS(execlp, w_execlp);
EXPORT_AS(execle, w_execle);
EXPORT_AS(_exit, w__exit);
EXPORT_AS(_Exit, w__Exit);

/* Called from dlsym, which runs inside sanitizer runtimes' own start-up: not instrumented. */
__attribute__((no_sanitize("thread", "address"))) void *exec_own_export(const char *name)
{
    static const struct {
        const char *name;
        void *fn;
    } own[] = {
        { "execve", (void *)w_execve },   { "execv", (void *)w_execv },
        { "execvp", (void *)w_execvp },   { "execvpe", (void *)w_execvpe },
        { "fexecve", (void *)w_fexecve }, { "execveat", (void *)w_execveat },
        { "execl", (void *)w_execl },     { "execlp", (void *)w_execlp },
        { "execle", (void *)w_execle },   { "_exit", (void *)w__exit },
        { "_Exit", (void *)w__Exit },
    };

    if (name[0] != 'e' && name[0] != 'f' && name[0] != '_')
        return NULL;
    for (size_t i = 0; i < sizeof own / sizeof own[0]; i++) {
        const char *a = name, *b = own[i].name;
        while (*a && *a == *b)
            a++, b++;
        if (*a == *b)
            return own[i].fn;
    }
    return NULL;
}
