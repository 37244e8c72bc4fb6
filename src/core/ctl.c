/* ctl.c - the control channel of `ktime ctl`: a FIFO per process, answers in a file. */
#include "ac_config.h" /* autoconf: _GNU_SOURCE */
#include "ctl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *const ctl_words[CTL_BAD + 1] = {
    [CTL_ON] = "on", [CTL_OFF] = "off", [CTL_SNAPSHOT] = "snapshot",
    [CTL_RESET] = "reset", [CTL_STATUS] = "status", [CTL_BAD] = NULL,
};

/* Whether st is a directory of uid's that no one else may enter or change. */
static bool private_dir(const struct stat *st, uid_t uid)
{
    return S_ISDIR(st->st_mode) && st->st_uid == uid && !(st->st_mode & 077);
}

int ctl_dir(char *buf, size_t n, const char *xdg, bool create, const char **why)
{
    uid_t uid = geteuid();
    struct stat st;
    size_t len;

    if (xdg && xdg[0] == '/' && lstat(xdg, &st) == 0 && private_dir(&st, uid))
        len = (size_t)snprintf(buf, n, "%s/ktime", xdg);
    else
        len = (size_t)snprintf(buf, n, "/tmp/ktime-%lu", (unsigned long)uid);
    if (len >= n) {
        *why = "is too long a name";
        return -1;
    }
    if (create && mkdir(buf, 0700) != 0 && errno != EEXIST) {
        *why = strerror(errno);
        return -1;
    }
    if (lstat(buf, &st) != 0) {
        *why = strerror(errno);
        return -1;
    }
    if (!private_dir(&st, uid)) {
        /* The phrase goes after the name, in the room left in buf. */
        char *tail = buf + len + 1;
        if (n - len - 1 < 96) {
            *why = "is not a private directory of yours";
            return -1;
        }
        snprintf(tail, n - len - 1, "is not a private directory of yours (%s, owner %lu, mode %04o)",
                 S_ISLNK(st.st_mode) ? "a symbolic link" : S_ISDIR(st.st_mode) ? "a directory"
                                                                                : "not a directory",
                 (unsigned long)st.st_uid, (unsigned)(st.st_mode & 07777));
        *why = tail;
        return -1;
    }
    return 0;
}

static int paths(struct ctl *c, const char *dir, long pid)
{
    if ((size_t)snprintf(c->fifo, sizeof c->fifo, "%s/%ld.ctl", dir, pid) >= sizeof c->fifo ||
        (size_t)snprintf(c->answers, sizeof c->answers, "%s/%ld.answers", dir, pid) >=
            sizeof c->answers)
        return -1;
    return 0;
}

int ctl_open(struct ctl *c, const char *dir, long pid, double now_ms, const char **why)
{
    struct stat st;

    memset(c, 0, sizeof *c);
    c->fd = -1;
    if (paths(c, dir, pid) != 0) {
        *why = "is too long a name";
        return -1;
    }
    /* A process of the same pid before this one (gone, or the image before an exec) may
     * have left its files: this pid's are this process's now. */
    unlink(c->fifo);
    unlink(c->answers);
    if (mkfifo(c->fifo, 0600) != 0) {
        *why = strerror(errno);
        return -1;
    }
    /* Read and write: a reader that is also a writer never sees the end of the file when a
     * client closes, and a client's non-blocking open always finds a reader. */
    c->fd = open(c->fifo, O_RDWR | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW);
    if (c->fd < 0 || fstat(c->fd, &st) != 0 || !S_ISFIFO(st.st_mode) || st.st_uid != geteuid()) {
        *why = c->fd < 0 ? strerror(errno) : "is not the FIFO just made";
        if (c->fd >= 0)
            close(c->fd);
        c->fd = -1;
        unlink(c->fifo);
        return -1;
    }
    every_init(&c->poll, CTL_POLL_MS, now_ms);
    return 0;
}

bool ctl_id_ok(const char *s)
{
    size_t n = 0;

    for (; s[n]; n++) {
        char ch = s[n];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
              ch == '.' || ch == '_' || ch == '-'))
            return false;
    }
    return n >= 1 && n <= CTL_ID_MAX;
}

/* Parses one line (no line end). Returns true when it is a request (valid ID). */
static bool parse(const char *line, struct ctl_request *q)
{
    char id[CTL_LINE_MAX], word[CTL_LINE_MAX], extra[2];
    int k = sscanf(line, "%127s %127s %1s", id, word, extra);

    if (k < 2 || !ctl_id_ok(id))
        return false;
    memset(q, 0, sizeof *q);
    /* Copies cut to the fields (q is zeroed): the ID is at most CTL_ID_MAX (ctl_id_ok), a
     * longer word is a bad one all the same. */
    memcpy(q->id, id, strnlen(id, sizeof q->id - 1));
    memcpy(q->word, word, strnlen(word, sizeof q->word - 1));
    q->cmd = CTL_BAD;
    for (int i = 0; k == 2 && i < CTL_BAD; i++)
        if (strcmp(word, ctl_words[i]) == 0)
            q->cmd = (enum ctl_cmd)i;
    return true;
}

/* The next complete line of buf as a request: 1, or 0 when no complete request is there. */
static int next_line(struct ctl *c, struct ctl_request *q)
{
    for (;;) {
        char *nl = memchr(c->buf, '\n', c->len);
        if (!nl) {
            if (c->len == sizeof c->buf) { /* no line end in sight: drop it */
                c->len = 0;
                c->skipping = true;
            }
            return 0;
        }
        size_t n = (size_t)(nl - c->buf);
        bool skip = c->skipping || n >= CTL_LINE_MAX;
        char line[CTL_LINE_MAX];
        if (!skip) {
            memcpy(line, c->buf, n);
            line[n] = '\0';
        }
        c->skipping = false;
        memmove(c->buf, nl + 1, c->len - n - 1);
        c->len -= n + 1;
        if (!skip && parse(line, q))
            return 1;
    }
}

int ctl_poll(struct ctl *c, double now_ms, struct ctl_request *q)
{
    if (c->fd < 0)
        return 0;
    if (next_line(c, q))
        return 1;
    if (!every_due(&c->poll, now_ms))
        return 0;
    for (;;) {
        ssize_t got = read(c->fd, c->buf + c->len, sizeof c->buf - c->len);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        c->len += (size_t)got;
        if (next_line(c, q))
            return 1;
    }
    return 0;
}

int ctl_answer(struct ctl *c, const struct ctl_request *q, bool ok, const char *text)
{
    char line[512];
    int n = snprintf(line, sizeof line, "%s %s %.400s", q->id, ok ? "ok" : "refused",
                     text ? text : "");
    int fd, rc = 0;

    if (n < 0)
        return -1;
    if ((size_t)n >= sizeof line - 1)
        n = (int)sizeof line - 2;
    for (int i = 0; i < n; i++) /* one line, whatever the text held */
        if (line[i] == '\n' || line[i] == '\r')
            line[i] = ' ';
    line[n++] = '\n';
    fd = open(c->answers, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK,
              0600);
    if (fd < 0)
        return -1;
    /* One write of less than a page: a reader sees the whole line or none of it. */
    if (write(fd, line, (size_t)n) != n)
        rc = -1;
    close(fd);
    return rc;
}

void ctl_close(struct ctl *c)
{
    if (c->fd < 0)
        return;
    close(c->fd);
    c->fd = -1;
    unlink(c->fifo);
    unlink(c->answers);
}

int ctl_send(const char *dir, long pid, const char *id, const char *word, const char **why)
{
    struct ctl c;
    struct stat st;
    char line[CTL_LINE_MAX];
    int fd, n;

    if (paths(&c, dir, pid) != 0) {
        *why = "is too long a name";
        errno = ENAMETOOLONG;
        return -1;
    }
    n = snprintf(line, sizeof line, "%s %s\n", id, word);
    if (!ctl_id_ok(id) || n <= 0 || (size_t)n >= sizeof line || strchr(word, '\n') ||
        strchr(word, ' ')) {
        *why = "is not a request that fits on a line";
        errno = EINVAL;
        return -1;
    }
    fd = open(c.fifo, O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
        int err = errno;
        *why = err == ENOENT ? "does not exist"
               : err == ENXIO ? "has no reader: its process is gone, or its ktime stopped"
                              : strerror(err);
        errno = err;
        return -1;
    }
    if (fstat(fd, &st) != 0 || !S_ISFIFO(st.st_mode) || st.st_uid != geteuid()) {
        close(fd);
        *why = "is not a control FIFO of yours";
        errno = EPERM;
        return -1;
    }
    ssize_t w = write(fd, line, (size_t)n);
    int err = errno;
    close(fd);
    if (w != n) {
        *why = w < 0 && err == EAGAIN ? "is full: its process does not read it" : strerror(err);
        errno = w < 0 ? err : EIO;
        return -1;
    }
    return 0;
}

int ctl_find_answer(const char *dir, long pid, const char *id, bool *ok, char *text, size_t n)
{
    struct ctl c;
    char line[600];
    size_t idn = strlen(id);
    int found = 0;
    FILE *f;

    if (paths(&c, dir, pid) != 0)
        return -1;
    int fd = open(c.answers, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0)
        return errno == ENOENT ? 0 : -1;
    if (!(f = fdopen(fd, "r"))) {
        close(fd);
        return -1;
    }
    while (fgets(line, sizeof line, f)) {
        size_t len = strlen(line);
        if (len == 0 || line[len - 1] != '\n') /* a line being written: not yet */
            break;
        line[--len] = '\0';
        if (strncmp(line, id, idn) != 0 || line[idn] != ' ')
            continue;
        const char *rest = line + idn + 1;
        if (strncmp(rest, "ok ", 3) == 0 || strcmp(rest, "ok") == 0) {
            *ok = true;
            rest += rest[2] ? 3 : 2;
        } else if (strncmp(rest, "refused ", 8) == 0 || strcmp(rest, "refused") == 0) {
            *ok = false;
            rest += rest[7] ? 8 : 7;
        } else {
            continue;
        }
        snprintf(text, n, "%s", rest);
        found = 1;
    }
    fclose(f);
    return found;
}
