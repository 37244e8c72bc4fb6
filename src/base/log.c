/* log.c - ktime's messages on stderr, and what keeps ktime's writes out of the program's
 * files and signals. */
#include "ac_config.h" /* autoconf: _GNU_SOURCE, PACKAGE_VERSION */
#include "log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int log_level = LOG_WARN;

/* What descriptors 1 and 2 named at start-up (index 1 and 2). */
static struct {
    bool open;
    dev_t dev;
    ino_t ino;
    mode_t type;
} stdio_start[3];
static bool stdio_noted;

void log_set_level(int level)
{
    log_level = level;
}

void log_note_stdio(void)
{
    struct stat st;

    for (int fd = 1; fd <= 2; fd++) {
        stdio_start[fd].open = fstat(fd, &st) == 0;
        if (stdio_start[fd].open) {
            stdio_start[fd].dev = st.st_dev;
            stdio_start[fd].ino = st.st_ino;
            stdio_start[fd].type = st.st_mode & S_IFMT;
        }
    }
    stdio_noted = true;
}

bool log_stdio_unchanged(int fd)
{
    struct stat st;
    int saved_errno = errno;
    bool open = fstat(fd, &st) == 0;

    errno = saved_errno;
    if (!stdio_noted)
        return open;
    if (fd < 1 || fd > 2 || !open || !stdio_start[fd].open)
        return false;
    return st.st_dev == stdio_start[fd].dev && st.st_ino == stdio_start[fd].ino &&
           (st.st_mode & S_IFMT) == stdio_start[fd].type;
}

bool log_stdio_at_start(int fd, dev_t *dev, ino_t *ino)
{
    struct stat st;

    if (fd < 1 || fd > 2)
        return false;
    if (!stdio_noted) {
        if (fstat(fd, &st) != 0)
            return false;
        *dev = st.st_dev;
        *ino = st.st_ino;
        return true;
    }
    *dev = stdio_start[fd].dev;
    *ino = stdio_start[fd].ino;
    return stdio_start[fd].open;
}

void log_hold_signals(struct log_hold *h)
{
    sigset_t both;

    sigemptyset(&both);
    sigaddset(&both, SIGPIPE);
    sigaddset(&both, SIGXFSZ);
    pthread_sigmask(SIG_BLOCK, &both, &h->mask);
    sigpending(&h->pending);
}

void log_release_signals(const struct log_hold *h)
{
    static const struct timespec now = { 0, 0 };
    static const int sigs[] = { SIGPIPE, SIGXFSZ };
    sigset_t pending, one;
    int saved_errno = errno;

    sigpending(&pending);
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        if (sigismember(&pending, sigs[i]) && !sigismember(&h->pending, sigs[i])) {
            sigemptyset(&one);
            sigaddset(&one, sigs[i]);
            sigtimedwait(&one, NULL, &now);
        }
    pthread_sigmask(SIG_SETMASK, &h->mask, NULL);
    errno = saved_errno;
}

void log_msg(int level, const char *fmt, ...)
{
    static const char *const prefix[] = { "", "warning: ", "", "debug: ", "" };
    char buf[1024];
    int saved_errno = errno; /* the host program's errno must survive our messages */
    int n = snprintf(buf, sizeof buf, "ktime: %s",
                     prefix[level >= 0 && level <= LOG_NOTICE ? level : 0]);
    struct log_hold hold;
    va_list ap;

    if (!log_stdio_unchanged(STDERR_FILENO)) {
        errno = saved_errno;
        return;
    }
    va_start(ap, fmt);
    n += vsnprintf(buf + n, sizeof buf - (size_t)n, fmt, ap);
    va_end(ap);
    if (n > (int)sizeof buf - 2)
        n = (int)sizeof buf - 2;
    buf[n++] = '\n';
    log_hold_signals(&hold);
    for (const char *p = buf; n > 0;) {
        ssize_t w = write(STDERR_FILENO, p, (size_t)n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break;
        p += w;
        n -= (int)w;
    }
    log_release_signals(&hold);
    errno = saved_errno;
}
