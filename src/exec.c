/* exec.c - the exec family: an exec replaces the process image without running its exit
 * handlers, so the report of the launches made so far is written first (finish_image_end),
 * then the real call runs unchanged. posix_spawn, system and popen start another process
 * and leave this one as it is: nothing to do there. */
#include "ac_config.h" /* autoconf: _GNU_SOURCE, PACKAGE_VERSION */

#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <unistd.h>

#include "exec.h"
#include "finish.h"
#include "lifecycle.h"

typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*execv_fn)(const char *, char *const[]);
typedef int (*fexecve_fn)(int, char *const[], char *const[]);
typedef int (*execveat_fn)(int, const char *, char *const[], char *const[], int);

static struct {
    execve_fn execve, execvpe;
    execv_fn execv, execvp;
    fexecve_fn fexecve;
    execveat_fn execveat;
} real;

static void *next(const char *name, void *cache)
{
    void **slot = cache;
    void *f = __atomic_load_n(slot, __ATOMIC_ACQUIRE);

    if (!f) {
        f = dlsym(RTLD_NEXT, name);
        __atomic_store_n(slot, f, __ATOMIC_RELEASE);
    }
    return f;
}

#define REAL(name) ((__typeof__(real.name))next(#name, &real.name))

/* Resolved at start-up: a child made by vfork() shares the parent's memory and must change
 * nothing of it (the wrappers then only call the real function). */
__attribute__((constructor)) static void exec_init(void)
{
    REAL(execve);
    REAL(execvpe);
    REAL(execv);
    REAL(execvp);
    REAL(fexecve);
    REAL(execveat);
}

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

KTIME_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
    CALL(execve, path, argv, envp);
}

KTIME_EXPORT int execv(const char *path, char *const argv[])
{
    CALL(execv, path, argv);
}

KTIME_EXPORT int execvp(const char *file, char *const argv[])
{
    CALL(execvp, file, argv);
}

KTIME_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
    CALL(execvpe, file, argv, envp);
}

KTIME_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
    CALL(fexecve, fd, argv, envp);
}

KTIME_EXPORT int execveat(int dirfd, const char *path, char *const argv[], char *const envp[],
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

KTIME_EXPORT int execl(const char *path, const char *arg, ...)
{
    va_list ap;
    COLLECT(argv, arg, ap, (void)0);
    CALL(execv, path, (char *const *)argv);
}

KTIME_EXPORT int execlp(const char *file, const char *arg, ...)
{
    va_list ap;
    COLLECT(argv, arg, ap, (void)0);
    CALL(execvp, file, (char *const *)argv);
}

KTIME_EXPORT int execle(const char *path, const char *arg, ...)
{
    va_list ap;
    char *const *envp;
    COLLECT(argv, arg, ap, envp = va_arg(ap, char *const *));
    CALL(execve, path, (char *const *)argv, envp);
}

/* Called from dlsym, which runs inside sanitizer runtimes' own start-up: not instrumented. */
__attribute__((no_sanitize("thread", "address"))) void *exec_own_export(const char *name)
{
    static const struct {
        const char *name;
        void *fn;
    } own[] = {
        { "execve", (void *)execve }, { "execv", (void *)execv },
        { "execvp", (void *)execvp }, { "execvpe", (void *)execvpe },
        { "fexecve", (void *)fexecve }, { "execveat", (void *)execveat },
        { "execl", (void *)execl }, { "execlp", (void *)execlp },
        { "execle", (void *)execle },
    };

    if (name[0] != 'e' && name[0] != 'f')
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
