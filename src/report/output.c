/* output.c - the report file: written to a temporary and renamed into place, appended in
 * place to the program's own stdout or stderr, or, for pipes and devices, written without
 * ever blocking past a deadline. */
#include "ac_config.h" /* autoconf: _GNU_SOURCE, PACKAGE_VERSION */
#include "output.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Writes size bytes of buf to fd; a non-blocking fd waits for room until deadline_ms.
 * Returns how many were written (all of them, or fewer with errno set). */
static size_t write_until(int fd, const char *buf, size_t size, double deadline_ms)
{
    size_t done = 0;

    while (done < size) {
        ssize_t n = write(fd, buf + done, size - done);
        if (n > 0) {
            done += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n == 0 || errno != EAGAIN)
            return done;
        double left = deadline_ms - now_ms();
        struct pollfd p = { .fd = fd, .events = POLLOUT };
        if (left <= 0 || poll(&p, 1, (int)(left + 1)) <= 0) {
            errno = ETIMEDOUT;
            return done;
        }
    }
    return done;
}

/* ---- pipes and devices: writes bounded in time ---- */

struct bounded {
    int fd;
    double deadline_ms;
};

static ssize_t bounded_write(void *cookie, const char *buf, size_t size)
{
    struct bounded *b = cookie;
    size_t done = write_until(b->fd, buf, size, b->deadline_ms);

    return done || !size ? (ssize_t)done : -1;
}

static int bounded_close(void *cookie)
{
    struct bounded *b = cookie;
    int rc = close(b->fd);

    free(b);
    return rc;
}

/* A reason with its verb, for the warning ("KTIME_OUTPUT '/x/r.txt' cannot be created: No such
 * file or directory"): "cannot be <what>: <err's text>", composed in o. */
static const char *cannot(struct output *o, const char *what, int err)
{
    snprintf(o->why, sizeof o->why, "cannot be %s: %s", what, strerror(err));
    return o->why;
}

static int open_bounded(struct output *o, const char *path, long timeout_ms, const char **why)
{
    cookie_io_functions_t io = { .write = bounded_write, .close = bounded_close };
    struct bounded *b = malloc(sizeof *b);
    int fd = open(path, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);

    if (fd < 0 || !b) {
        *why = fd < 0 && errno == ENXIO ? "is a FIFO with no reader" : cannot(o, "opened", errno);
        if (fd >= 0)
            close(fd);
        free(b);
        return -1;
    }
    b->fd = fd;
    b->deadline_ms = now_ms() + (double)timeout_ms;
    o->deadline_ms = b->deadline_ms;
    o->fd = fd;
    if (!(o->f = fopencookie(b, "w", io))) {
        *why = cannot(o, "opened", errno);
        close(fd);
        free(b);
        return -1;
    }
    return 0;
}

/* ---- the program's own stdout or stderr: appended in place ---- */

/* Which of descriptors 1 and 2 named the file st at start-up: 1 or 2; 0 for neither. */
static int stdio_at_start(const struct stat *st)
{
    dev_t dev;
    ino_t ino;

    for (int fd = 1; fd <= 2; fd++)
        if (log_stdio_at_start(fd, &dev, &ino) && dev == st->st_dev && ino == st->st_ino)
            return fd;
    return 0;
}

/* Whether descriptor 1 or 2 names the file st now. */
static bool stdio_now(const struct stat *st)
{
    struct stat now;

    for (int fd = 1; fd <= 2; fd++)
        if (fstat(fd, &now) == 0 && now.st_dev == st->st_dev && now.st_ino == st->st_ino)
            return true;
    return false;
}

/* Writes out what the program left in its stdout (fd 1) or stderr (fd 2) buffer, so that it
 * comes before the report, as it would have come before any later line of its own. Only
 * when the stream's lock is free: a thread stopped inside printf may hold it. */
static void flush_program_stream(int fd)
{
    FILE *s = fd == 1 ? stdout : stderr;

    if (!log_stdio_unchanged(fd) || ftrylockfile(s) != 0)
        return;
    fflush_unlocked(s);
    funlockfile(s);
}

static int open_append(struct output *o, const char *path, int std, const struct stat *st,
                       bool report, const char **why)
{
    struct stat got;
    int fd = -1;

    if (report)
        flush_program_stream(std);
    /* A descriptor of the program's shares its offset: the report lands where the program's
     * next write would, and the program's own later writes go after it. */
    if (log_stdio_unchanged(std) && (fcntl(std, F_GETFL) & O_ACCMODE) != O_RDONLY)
        fd = fcntl(std, F_DUPFD_CLOEXEC, 3);
    if (fd < 0) {
        fd = open(path, O_WRONLY | O_APPEND | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0) {
            *why = cannot(o, "opened", errno);
            return -1;
        }
        if (fstat(fd, &got) != 0 || got.st_dev != st->st_dev || got.st_ino != st->st_ino) {
            close(fd);
            *why = "changed while it was opened";
            return -1;
        }
    }
    o->fd = fd;
    o->append = true;
    snprintf(o->dest, sizeof o->dest, "%s", path);
    /* "w" on a descriptor neither truncates nor changes its flags ("a" would set O_APPEND on
     * the program's own open file). */
    if (!(o->f = fdopen(fd, "w"))) {
        *why = cannot(o, "opened", errno);
        close(fd);
        return -1;
    }
    return 0;
}

/* ---- regular files: a temporary renamed into place ---- */

/* A reason composed for output_open_lines, which has no struct output to hold it. */
static __thread char not_own_why[96];

/* The process's umask, without changing it (umask(2) would, for every thread): from
 * /proc/self/status; 022 when that cannot be read. */
static mode_t current_umask(void)
{
    char line[128];
    unsigned int m;
    FILE *f = fopen("/proc/self/status", "re");
    mode_t mask = 022;

    if (!f)
        return mask;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "Umask: %o", &m) == 1) {
            mask = (mode_t)m;
            break;
        }
    fclose(f);
    return mask;
}

/* A write-protected file: one this user may not write, or, for root (whom no mode stops),
 * one with no write bit at all. */
static bool write_protected(const char *path, const struct stat *st)
{
    if (!(st->st_mode & (S_IWUSR | S_IWGRP | S_IWOTH)))
        return true;
    return faccessat(AT_FDCWD, path, W_OK, AT_EACCESS) != 0 && errno == EACCES;
}

static int open_replace(struct output *o, const char *dest, const struct stat *old,
                        const char **why)
{
    char dir[PATH_MAX], base[PATH_MAX];
    int fd;

    snprintf(dir, sizeof dir, "%s", dest);
    snprintf(base, sizeof base, "%s", dest);
    if ((size_t)snprintf(o->tmp, sizeof o->tmp, "%s/.%s.ktime-XXXXXX", dirname(dir),
                         basename(base)) >= sizeof o->tmp) {
        *why = "is too long a name";
        return -1;
    }
    fd = mkostemp(o->tmp, O_CLOEXEC);
    if (fd < 0 && errno == ENAMETOOLONG) { /* a long name leaves no room for the suffix */
        snprintf(dir, sizeof dir, "%s", dest);
        snprintf(o->tmp, sizeof o->tmp, "%s/.ktime-XXXXXX", dirname(dir));
        fd = mkostemp(o->tmp, O_CLOEXEC);
    }
    if (fd < 0) {
        /* Writing the file in place instead would let a reader, or a second process writing
         * the same name, see half a report. */
        if (!old || errno == ENOENT) {
            *why = cannot(o, "created", errno);
            return -1;
        }
        snprintf(o->why, sizeof o->why,
                 "is left as it is: no temporary file can be made in its directory to replace "
                 "it whole (%s)", strerror(errno));
        *why = o->why;
        return -1;
    }
    fchmod(fd, old ? old->st_mode & 07777 : 0666 & ~current_umask());
    o->replace = true;
    o->fd = fd;
    snprintf(o->dest, sizeof o->dest, "%s", dest);
    if (!(o->f = fdopen(fd, "w"))) {
        *why = cannot(o, "created", errno);
        close(fd);
        unlink(o->tmp);
        o->replace = false;
        return -1;
    }
    return 0;
}

/* The protected-symlinks rule (fs.protected_symlinks): a link in a sticky, world-writable
 * directory is followed only by its owner or when the directory's owner owns it too. */
static bool link_allowed(const char *path, const struct stat *link)
{
    char dir[PATH_MAX];
    struct stat d;

    snprintf(dir, sizeof dir, "%s", path);
    if (stat(dirname(dir), &d) != 0)
        return false;
    if (!(d.st_mode & S_ISVTX) || !(d.st_mode & S_IWOTH))
        return true;
    return link->st_uid == geteuid() || link->st_uid == d.st_uid;
}

/* What a file is opened for: the report at exit, a file written through the run by one
 * thread (output_open_stream), or a snapshot (output_open_snapshot). */
enum open_for { FOR_REPORT, FOR_STREAM, FOR_SNAPSHOT };

/* path, which lstat() found a symbolic link (*st), followed when link_allowed(): *st becomes
 * what it names and *via_link true. Returns 0, or -1 with *why (composed in o when o is
 * not NULL: "cannot be followed: ..."; the error's own text otherwise). */
static int follow_link(struct output *o, const char *path, struct stat *st, bool *via_link,
                       const char **why)
{
    if (!link_allowed(path, st)) {
        *why = "is a symbolic link owned by another user in a world-writable sticky "
               "directory (not followed)";
        return -1;
    }
    if (stat(path, st) != 0) {
        if (errno == ENOENT)
            *why = "is a symbolic link to nothing";
        else
            *why = o ? cannot(o, "followed", errno) : strerror(errno);
        return -1;
    }
    *via_link = true;
    return 0;
}

static const char not_own_file[] = "is the program's stdout or stderr: written again and again "
                                   "while the program runs, it needs a file of its own";

/* A regular file at path (st: what it is, after a link when via_link). */
static int open_regular(struct output *o, const char *path, const struct stat *st,
                        bool via_link, enum open_for mode, const char **why)
{
    char real[PATH_MAX];
    int std = stdio_at_start(st);

    if (std && mode == FOR_SNAPSHOT) {
        *why = not_own_file;
        return -1;
    }
    if (std)
        return open_append(o, path, std, st, mode == FOR_REPORT, why);
    if (stdio_now(st)) {
        *why = "is a file the program opened on its stdout or stderr descriptor after "
               "start-up; left as it is";
        return -1;
    }
    if (write_protected(path, st)) {
        snprintf(o->why, sizeof o->why, "is write-protected (mode %03o); left as it is",
                 (unsigned)(st->st_mode & 07777));
        *why = o->why;
        return -1;
    }
    if (!via_link)
        return open_replace(o, path, st, why);
    /* Through a link: the temporary goes beside the file it names. */
    if (!realpath(path, real)) {
        *why = cannot(o, "resolved", errno);
        return -1;
    }
    return open_replace(o, real, st, why);
}

static int open_any(struct output *o, const char *path, long timeout_ms, enum open_for mode,
                    const char **why)
{
    struct stat st;
    bool via_link = false;

    memset(o, 0, sizeof *o);
    o->fd = -1;
    if (lstat(path, &st) != 0) {
        if (errno != ENOENT) {
            *why = cannot(o, "looked up", errno);
            return -1;
        }
        return open_replace(o, path, NULL, why);
    }
    if (S_ISLNK(st.st_mode) && follow_link(o, path, &st, &via_link, why) != 0)
        return -1;
    if (S_ISREG(st.st_mode))
        return open_regular(o, path, &st, via_link, mode, why);
    if ((S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)) && mode == FOR_SNAPSHOT) {
        *why = stdio_at_start(&st) ? not_own_file
                                   : "is a FIFO or a device: a snapshot goes to a regular file, "
                                     "replaced whole each time";
        return -1;
    }
    if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)) {
        int std = stdio_at_start(&st);
        if (mode == FOR_REPORT && std)
            flush_program_stream(std);
        return open_bounded(o, path, timeout_ms, why);
    }
    *why = S_ISDIR(st.st_mode)    ? "is a directory"
           : S_ISSOCK(st.st_mode) ? "is a socket"
                                  : "is not a regular file, a FIFO or a character device";
    return -1;
}

int output_open(struct output *o, const char *path, long timeout_ms, const char **why)
{
    struct log_hold hold;

    log_hold_signals(&hold);
    if (open_any(o, path, timeout_ms, FOR_REPORT, why) != 0) {
        log_release_signals(&hold);
        return -1;
    }
    o->hold = hold;
    o->held = true;
    return 0;
}

int output_open_snapshot(struct output *o, const char *path, const char **why)
{
    struct log_hold hold;

    log_hold_signals(&hold);
    if (open_any(o, path, 0, FOR_SNAPSHOT, why) != 0) {
        log_release_signals(&hold);
        return -1;
    }
    o->hold = hold;
    o->held = true;
    return 0;
}

int output_open_stream(struct output *o, const char *path, const char **why)
{
    return open_any(o, path, 0, FOR_STREAM, why);
}

/* ---- a file of lines appended through the run ---- */

int output_open_lines(const char *path, const char **why)
{
    struct stat st, got;
    bool via_link = false;
    int fd;

    if (lstat(path, &st) != 0) {
        if (errno != ENOENT) {
            *why = strerror(errno);
            return -1;
        }
        fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY |
                            O_NONBLOCK | O_CLOEXEC, 0666);
        if (fd >= 0)
            return fd;
        if (errno != EEXIST || lstat(path, &st) != 0) { /* EEXIST: made meanwhile */
            *why = strerror(errno);
            return -1;
        }
    }
    if (S_ISLNK(st.st_mode) && follow_link(NULL, path, &st, &via_link, why) != 0)
        return -1;
    if (!S_ISREG(st.st_mode)) {
        *why = stdio_at_start(&st) ? not_own_file : "is not a regular file";
        return -1;
    }
    if (stdio_at_start(&st) || stdio_now(&st)) {
        *why = not_own_file;
        return -1;
    }
    if (write_protected(path, &st)) {
        snprintf(not_own_why, sizeof not_own_why, "is write-protected (mode %03o); left as it is",
                 (unsigned)(st.st_mode & 07777));
        *why = not_own_why;
        return -1;
    }
    fd = open(path, O_WRONLY | O_APPEND | O_NOCTTY | O_NONBLOCK | O_CLOEXEC |
                        (via_link ? 0 : O_NOFOLLOW));
    if (fd < 0) {
        *why = strerror(errno);
        return -1;
    }
    if (fstat(fd, &got) != 0 || got.st_dev != st.st_dev || got.st_ino != st.st_ino) {
        close(fd);
        *why = "changed while it was opened";
        return -1;
    }
    return fd;
}

int output_append_line(int fd, const char *buf, size_t n)
{
    struct log_hold hold;
    size_t done;
    int err;

    log_hold_signals(&hold);
    done = write_until(fd, buf, n, now_ms());
    err = errno;
    log_release_signals(&hold);
    if (done == n)
        return 0;
    errno = err ? err : EIO;
    return -1;
}

int output_write(struct output *o, const void *buf, size_t n, long timeout_ms)
{
    struct log_hold hold;
    size_t done;
    int err;

    log_hold_signals(&hold);
    done = write_until(o->fd, buf, n, now_ms() + (double)timeout_ms);
    err = errno;
    log_release_signals(&hold);
    if (done == n)
        return 0;
    errno = err ? err : EIO;
    return -1;
}

/* Flushes and closes o's stream: 0, or the first error (EIO for a write the caller saw fail). */
static int close_stream(struct output *o, bool write_failed)
{
    int err = 0;

    if (fflush(o->f) != 0 || ferror(o->f))
        err = errno ? errno : EIO;
    if (fclose(o->f) != 0 && !err)
        err = errno ? errno : EIO;
    o->f = NULL;
    o->fd = -1;
    return write_failed && !err ? EIO : err;
}

int output_close(struct output *o, bool write_failed, const char **why)
{
    int err;

    if (!o->f)
        return -1;
    err = close_stream(o, write_failed);
    if (!err && o->replace && rename(o->tmp, o->dest) != 0)
        err = errno;
    if (err && o->replace)
        unlink(o->tmp);
    if (o->held) {
        log_release_signals(&o->hold);
        o->held = false;
    }
    if (err) {
        *why = strerror(err);
        return -1;
    }
    return 0;
}

/* ---- a file made only where none exists ---- */

int output_open_new(struct output *o, const char *path, const char **why)
{
    char dir[PATH_MAX], base[PATH_MAX];
    int fd;

    memset(o, 0, sizeof *o);
    snprintf(o->dest, sizeof o->dest, "%s", path);
    snprintf(dir, sizeof dir, "%s", path);
    snprintf(base, sizeof base, "%s", path);
    if ((size_t)snprintf(o->tmp, sizeof o->tmp, "%s/.%s.ktime-XXXXXX", dirname(dir),
                         basename(base)) >= sizeof o->tmp) {
        *why = "is too long a name";
        return -1;
    }
    fd = mkostemp(o->tmp, O_CLOEXEC);
    if (fd >= 0) {
        fchmod(fd, 0666 & ~current_umask());
        o->replace = true;
    } else {
        /* No temporary beside it (a read-only directory): made in place, only if absent. */
        o->tmp[0] = '\0';
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0666);
        if (fd < 0) {
            *why = strerror(errno);
            return errno == EEXIST ? 1 : -1;
        }
    }
    if (!(o->f = fdopen(fd, "w"))) {
        *why = strerror(errno);
        close(fd);
        unlink(o->replace ? o->tmp : path);
        o->replace = false;
        return -1;
    }
    return 0;
}

/* Puts the complete temporary tmp at dest unless something is there: link(), or, where the
 * file system has no hard links, rename with RENAME_NOREPLACE. Returns 0 or an errno. */
static int place_new(const char *tmp, const char *dest)
{
    int err;

    if (link(tmp, dest) == 0) {
        unlink(tmp);
        return 0;
    }
    err = errno;
    if (err == EPERM || err == EOPNOTSUPP || err == ENOSYS || err == EMLINK) {
#ifdef SYS_renameat2
        if (syscall(SYS_renameat2, AT_FDCWD, tmp, AT_FDCWD, dest, 1 /* RENAME_NOREPLACE */) == 0)
            return 0;
        err = errno;
#endif
    }
    unlink(tmp);
    return err;
}

int output_close_new(struct output *o, bool write_failed, const char **why)
{
    int err;

    if (!o->f)
        return -1;
    err = close_stream(o, write_failed);
    if (err) {
        unlink(o->replace ? o->tmp : o->dest); /* a file made in place is this call's own */
        *why = strerror(err);
        return -1;
    }
    if (o->replace && (err = place_new(o->tmp, o->dest)) != 0) {
        *why = strerror(err);
        return err == EEXIST ? 1 : -1;
    }
    return 0;
}
