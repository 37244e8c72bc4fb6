/* output.c - the report file: written to a temporary and renamed into place, or, for pipes
 * and devices, written without ever blocking past a deadline. */
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

/* ---- pipes and devices: writes bounded in time ---- */

struct bounded {
    int fd;
    double deadline_ms;
};

static ssize_t bounded_write(void *cookie, const char *buf, size_t size)
{
    struct bounded *b = cookie;
    size_t done = 0;

    while (done < size) {
        ssize_t n = write(b->fd, buf + done, size - done);
        if (n > 0) {
            done += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno != EAGAIN)
            return done ? (ssize_t)done : -1;
        double left = b->deadline_ms - now_ms();
        struct pollfd p = { .fd = b->fd, .events = POLLOUT };
        if (left <= 0 || poll(&p, 1, (int)(left + 1)) <= 0) {
            errno = ETIMEDOUT;
            return done ? (ssize_t)done : -1;
        }
    }
    return (ssize_t)done;
}

static int bounded_close(void *cookie)
{
    struct bounded *b = cookie;
    int rc = close(b->fd);

    free(b);
    return rc;
}

static int open_bounded(struct output *o, const char *path, long timeout_ms, const char **why)
{
    cookie_io_functions_t io = { .write = bounded_write, .close = bounded_close };
    struct bounded *b = malloc(sizeof *b);
    int fd = open(path, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);

    if (fd < 0 || !b) {
        *why = fd < 0 && errno == ENXIO ? "is a FIFO with no reader" : strerror(errno);
        if (fd >= 0)
            close(fd);
        free(b);
        return -1;
    }
    b->fd = fd;
    b->deadline_ms = now_ms() + (double)timeout_ms;
    o->deadline_ms = b->deadline_ms;
    if (!(o->f = fopencookie(b, "w", io))) {
        *why = strerror(errno);
        close(fd);
        free(b);
        return -1;
    }
    return 0;
}

/* ---- regular files: a temporary renamed into place ---- */

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
    if (fd < 0) {
        /* No new file can be made beside it (a read-only directory, say): write it in place,
         * never through a link. */
        int err = errno;
        fd = open(dest, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
                  0666);
        if (fd < 0) {
            *why = strerror(fd < 0 && errno == ENOENT ? err : errno);
            return -1;
        }
        o->tmp[0] = '\0';
    } else {
        fchmod(fd, old ? old->st_mode & 07777 : 0666 & ~current_umask());
        o->replace = true;
    }
    snprintf(o->dest, sizeof o->dest, "%s", dest);
    if (!(o->f = fdopen(fd, "w"))) {
        *why = strerror(errno);
        close(fd);
        if (o->replace)
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

int output_open(struct output *o, const char *path, long timeout_ms, const char **why)
{
    struct stat st;
    char real[PATH_MAX];

    memset(o, 0, sizeof *o);
    if (lstat(path, &st) != 0) {
        if (errno != ENOENT) {
            *why = strerror(errno);
            return -1;
        }
        return open_replace(o, path, NULL, why);
    }
    if (S_ISLNK(st.st_mode)) {
        if (!link_allowed(path, &st)) {
            *why = "is a symbolic link owned by another user in a world-writable sticky "
                   "directory (not followed)";
            return -1;
        }
        if (stat(path, &st) != 0) {
            *why = errno == ENOENT ? "is a symbolic link to nothing" : strerror(errno);
            return -1;
        }
        if (S_ISREG(st.st_mode)) {
            if (!realpath(path, real)) {
                *why = strerror(errno);
                return -1;
            }
            return open_replace(o, real, &st, why);
        }
    }
    if (S_ISREG(st.st_mode))
        return open_replace(o, path, &st, why);
    if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode))
        return open_bounded(o, path, timeout_ms, why);
    *why = S_ISDIR(st.st_mode)    ? "is a directory"
           : S_ISSOCK(st.st_mode) ? "is a socket"
                                  : "is not a regular file, a FIFO or a character device";
    return -1;
}

int output_close(struct output *o, bool write_failed, const char **why)
{
    int err = 0;

    if (!o->f)
        return -1;
    if (fflush(o->f) != 0 || ferror(o->f))
        err = errno ? errno : EIO;
    if (fclose(o->f) != 0 && !err)
        err = errno ? errno : EIO;
    o->f = NULL;
    if (write_failed && !err)
        err = EIO;
    if (!err && o->replace && rename(o->tmp, o->dest) != 0)
        err = errno;
    if (err) {
        if (o->replace)
            unlink(o->tmp);
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
    int err = 0;

    if (!o->f)
        return -1;
    if (fflush(o->f) != 0 || ferror(o->f))
        err = errno ? errno : EIO;
    if (fclose(o->f) != 0 && !err)
        err = errno ? errno : EIO;
    o->f = NULL;
    if (write_failed && !err)
        err = EIO;
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
