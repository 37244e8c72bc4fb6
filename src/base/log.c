/* log.c - ktime's messages on stderr. */
#include "ac_config.h" /* autoconf: _GNU_SOURCE, PACKAGE_VERSION */
#include "log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

int log_level = LOG_WARN;

void log_set_level(int level)
{
    log_level = level;
}

void log_msg(int level, const char *fmt, ...)
{
    static const char *const prefix[] = { "", "warning: ", "", "debug: ", "" };
    char buf[1024];
    int saved_errno = errno; /* the host program's errno must survive our messages */
    int n = snprintf(buf, sizeof buf, "ktime: %s",
                     prefix[level >= 0 && level <= LOG_NOTICE ? level : 0]);
    va_list ap;

    va_start(ap, fmt);
    n += vsnprintf(buf + n, sizeof buf - (size_t)n, fmt, ap);
    va_end(ap);
    if (n > (int)sizeof buf - 2)
        n = (int)sizeof buf - 2;
    buf[n++] = '\n';
    for (const char *p = buf; n > 0;) {
        ssize_t w = write(STDERR_FILENO, p, (size_t)n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break;
        p += w;
        n -= (int)w;
    }
    errno = saved_errno;
}
