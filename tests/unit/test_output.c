/* test_output.c - the report file (output.c): a temporary renamed into place, the old file
 * left whole when writing fails (a caller's error, a full disk), modes, links (followed, and
 * not in a sticky world-writable directory when another user owns them), a read-only
 * directory and a write-protected file (refused), the program's stdout appended in place,
 * a descriptor 2 the program reused left alone, a file size limit that kills nobody, FIFOs
 * with and without a reader (and one that never reads or leaves), sockets, directories and
 * character devices. Never blocks: every case runs under alarm(). */
#define _GNU_SOURCE /* nftw, lchown */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "output.h"

#define OTHER_UID 65534 /* nobody */

static char dir[PATH_MAX];

static void path_in(char *out, const char *d, const char *name)
{
    assert_true((size_t)snprintf(out, PATH_MAX, "%s/%s", d, name) < PATH_MAX);
}

static void put(const char *path, const char *text, mode_t mode)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(chmod(path, mode), 0);
}

/* The whole file as a string (static buffer). */
static const char *slurp(const char *path)
{
    static char buf[1 << 16];
    FILE *f = fopen(path, "r");
    size_t n;

    if (!f)
        return "<cannot open>";
    n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* Temporaries output.c leaves in d: names ".<name>.ktime-XXXXXX". */
static int temps_in(const char *d)
{
    DIR *dd = opendir(d);
    struct dirent *e;
    int n = 0;

    assert_non_null(dd);
    while ((e = readdir(dd)))
        if (e->d_name[0] == '.' && strstr(e->d_name, ".ktime-"))
            n++;
    closedir(dd);
    return n;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(p);
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "%s/ktime-output.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(dir))
        return -1;
    chmod(dir, 0755); /* the read-only-directory case runs as another user when root */
    alarm(20);        /* a case that blocks fails instead of hanging */
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    alarm(0);
    return nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* A new file: written to ".r.txt.ktime-XXXXXX" beside it, nothing at the name until the
 * report is complete, then renamed; mode 0666 less the umask. */
static void new_file_through_a_temporary(void **state)
{
    char p[PATH_MAX], prefix[PATH_MAX];
    struct output o;
    const char *why = NULL;
    struct stat st;
    mode_t old = umask(027);

    (void)state;
    path_in(p, dir, "r.txt");
    assert_int_equal(output_open(&o, p, 1000, &why), 0);
    umask(old);
    assert_true(o.replace);
    path_in(prefix, dir, ".r.txt.ktime-");
    assert_memory_equal(o.tmp, prefix, strlen(prefix));
    assert_int_equal(strlen(o.tmp), strlen(prefix) + 6);
    assert_int_equal(access(p, F_OK), -1);   /* no half report at the name */
    assert_int_equal(access(o.tmp, F_OK), 0);
    fputs("report\n", o.f);
    assert_int_equal(output_close(&o, false, &why), 0);
    assert_string_equal(slurp(p), "report\n");
    assert_int_equal(stat(p, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0640);
    assert_int_equal(temps_in(dir), 0);
}

/* An existing file keeps its mode; readers see the old report until the new one is whole;
 * it is replaced by a rename (a new inode), not rewritten. */
static void existing_file_replaced_mode_kept(void **state)
{
    char p[PATH_MAX];
    struct output o;
    const char *why = NULL;
    struct stat before, after;

    (void)state;
    path_in(p, dir, "r.json");
    put(p, "old report\n", 0604);
    assert_int_equal(stat(p, &before), 0);
    assert_int_equal(output_open(&o, p, 1000, &why), 0);
    assert_true(o.replace);
    fputs("new report, first half\n", o.f);
    fflush(o.f);
    assert_string_equal(slurp(p), "old report\n");
    fputs("second half\n", o.f);
    assert_int_equal(output_close(&o, false, &why), 0);
    assert_string_equal(slurp(p), "new report, first half\nsecond half\n");
    assert_int_equal(stat(p, &after), 0);
    assert_int_equal(after.st_mode & 07777, 0604);
    assert_true(after.st_ino != before.st_ino);
    assert_int_equal(temps_in(dir), 0);
}

/* The caller's own writing failed: the old file stays, the temporary goes. */
static void caller_failure_keeps_old_file(void **state)
{
    char p[PATH_MAX];
    struct output o;
    const char *why = NULL;

    (void)state;
    path_in(p, dir, "r.txt");
    put(p, "old report\n", 0644);
    assert_int_equal(output_open(&o, p, 1000, &why), 0);
    fputs("half a rep", o.f);
    assert_int_equal(output_close(&o, true, &why), -1);
    assert_non_null(why);
    assert_string_equal(slurp(p), "old report\n");
    assert_int_equal(temps_in(dir), 0);
}

/* A full disk, simulated by RLIMIT_FSIZE (writes past it fail with EFBIG once SIGXFSZ is
 * ignored): the old file stays whole, no temporary is left, the error is named. */
static void full_disk_keeps_old_file(void **state)
{
    char p[PATH_MAX], big[4096];
    struct output o;
    const char *why = NULL;
    struct rlimit saved, small;
    void (*old_handler)(int) = signal(SIGXFSZ, SIG_IGN);
    int rc_open, rc_close;

    (void)state;
    path_in(p, dir, "r.txt");
    put(p, "old report\n", 0644);
    memset(big, 'x', sizeof big);
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &saved), 0);
    small = saved;
    small.rlim_cur = 1024;
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
    rc_open = output_open(&o, p, 1000, &why);
    if (rc_open == 0) {
        for (int i = 0; i < 16; i++)
            fwrite(big, 1, sizeof big, o.f);
        rc_close = output_close(&o, false, &why);
    }
    setrlimit(RLIMIT_FSIZE, &saved);
    signal(SIGXFSZ, old_handler);
    assert_int_equal(rc_open, 0);
    assert_int_equal(rc_close, -1);
    assert_string_equal(why, strerror(EFBIG));
    assert_string_equal(slurp(p), "old report\n");
    assert_int_equal(temps_in(dir), 0);
}

/* A link in an ordinary directory is followed: the file it names is replaced (its mode
 * kept, the temporary made beside it), and the link stays a link. */
static void link_followed(void **state)
{
    char sub[PATH_MAX], target[PATH_MAX], link[PATH_MAX], back[PATH_MAX];
    struct output o;
    const char *why = NULL;
    struct stat st;
    ssize_t n;

    (void)state;
    path_in(sub, dir, "elsewhere");
    assert_int_equal(mkdir(sub, 0755), 0);
    path_in(target, sub, "t.txt");
    put(target, "old target\n", 0600);
    path_in(link, dir, "l.txt");
    assert_int_equal(symlink(target, link), 0);
    assert_int_equal(output_open(&o, link, 1000, &why), 0);
    assert_true(o.replace);
    assert_memory_equal(o.tmp, sub, strlen(sub)); /* beside the target, not the link */
    fputs("through the link\n", o.f);
    assert_int_equal(output_close(&o, false, &why), 0);
    assert_int_equal(lstat(link, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    n = readlink(link, back, sizeof back - 1);
    assert_true(n > 0);
    back[n] = '\0';
    assert_string_equal(back, target);
    assert_string_equal(slurp(target), "through the link\n");
    assert_int_equal(stat(target, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0600);
    assert_int_equal(temps_in(dir) + temps_in(sub), 0);
}

/* A world-writable sticky directory (like /tmp): a link owned by another user (neither this
 * one nor the directory's owner) is not followed, and what it names is not touched; one this
 * user owns is. Needs root to give a link away. */
static void sticky_dir_links(void **state)
{
    char sticky[PATH_MAX], target[PATH_MAX], theirs[PATH_MAX], mine[PATH_MAX];
    struct output o;
    const char *why = NULL;
    struct stat st;

    (void)state;
    if (geteuid() != 0) {
        skip();
        return;
    }
    path_in(sticky, dir, "sticky");
    assert_int_equal(mkdir(sticky, 0755), 0);
    assert_int_equal(chmod(sticky, 01777), 0);
    path_in(target, dir, "victim.txt");
    put(target, "precious\n", 0644);
    path_in(theirs, sticky, "theirs.txt");
    assert_int_equal(symlink(target, theirs), 0);
    assert_int_equal(lchown(theirs, OTHER_UID, OTHER_UID), 0);
    assert_int_equal(output_open(&o, theirs, 1000, &why), -1);
    assert_non_null(why);
    assert_non_null(strstr(why, "symbolic link"));
    assert_string_equal(slurp(target), "precious\n");
    assert_int_equal(lstat(theirs, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_int_equal(temps_in(sticky) + temps_in(dir), 0);

    /* The same link owned by this user: followed. */
    path_in(mine, sticky, "mine.txt");
    assert_int_equal(symlink(target, mine), 0);
    assert_int_equal(output_open(&o, mine, 1000, &why), 0);
    fputs("mine\n", o.f);
    assert_int_equal(output_close(&o, false, &why), 0);
    assert_string_equal(slurp(target), "mine\n");
    assert_int_equal(lstat(mine, &st), 0);
    assert_true(S_ISLNK(st.st_mode));

    /* A link owned by the directory's owner (here another user owns both): followed. */
    assert_int_equal(chown(sticky, OTHER_UID, OTHER_UID), 0);
    assert_int_equal(output_open(&o, theirs, 1000, &why), 0);
    fputs("owner's\n", o.f);
    assert_int_equal(output_close(&o, false, &why), 0);
    assert_string_equal(slurp(target), "owner's\n");
    assert_int_equal(temps_in(sticky) + temps_in(dir), 0);
}

/* No file can be made in the directory, but the report file itself is writable: refused
 * (written in place, a reader or a second writer could see half a report), the file left as
 * it is. As root (whom a mode does not stop) the case runs in a child that became another
 * user. */
static int ro_dir_case(const char *ro, const char *p)
{
    struct output o;
    const char *why = NULL;

    if (output_open(&o, p, 1000, &why) == 0)
        return 10;
    if (!why || !strstr(why, "no temporary file can be made in its directory"))
        return 11;
    return temps_in(ro) ? 13 : 0;
}

static void read_only_dir_refused(void **state)
{
    char ro[PATH_MAX], p[PATH_MAX];
    struct stat before, after;
    int rc;

    (void)state;
    path_in(ro, dir, "ro");
    assert_int_equal(mkdir(ro, 0755), 0);
    path_in(p, ro, "r.txt");
    put(p, "old report, longer than the new one\n", 0666);
    assert_int_equal(stat(p, &before), 0);
    assert_int_equal(chmod(ro, 0555), 0);
    if (geteuid() == 0) {
        pid_t pid = fork();
        int status = 0;
        assert_true(pid >= 0);
        if (pid == 0) {
            if (setgid(OTHER_UID) != 0 || setuid(OTHER_UID) != 0)
                _exit(20);
            _exit(ro_dir_case(ro, p));
        }
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        rc = WEXITSTATUS(status);
    } else {
        rc = ro_dir_case(ro, p);
    }
    chmod(ro, 0755);
    assert_int_equal(rc, 0);
    assert_string_equal(slurp(p), "old report, longer than the new one\n");
    assert_int_equal(stat(p, &after), 0);
    assert_true(after.st_ino == before.st_ino);
}

/* A write-protected file (0444): refused and left as it is, though its directory would let
 * a rename replace it (root too). */
static void write_protected_refused(void **state)
{
    char p[PATH_MAX];
    struct output o;
    const char *why = NULL;

    (void)state;
    path_in(p, dir, "r.txt");
    put(p, "protected\n", 0444);
    assert_int_equal(output_open(&o, p, 1000, &why), -1);
    assert_string_equal(why, "is write-protected (mode 444); left as it is");
    assert_string_equal(slurp(p), "protected\n");
    assert_int_equal(temps_in(dir), 0);
}

/* In a child whose stdout (descriptor 1) is the file p, opened to append (>>): p, by its
 * name and as /dev/stdout, is written in place at its end, after what the program had in
 * its stdout buffer; no temporary. Returns 0 or the number of the failed step. */
static int stdout_case(const char *p, const char *spelling)
{
    struct output o;
    const char *why = NULL;
    int fd = open(p, O_WRONLY | O_APPEND);

    if (fd < 0 || dup2(fd, 1) != 1)
        return 10;
    close(fd);
    log_note_stdio();
    fputs("the program's line\n", stdout); /* still in stdout's buffer */
    if (output_open(&o, spelling, 1000, &why) != 0)
        return 11;
    if (o.replace || !o.append)
        return 12;
    fputs("report\n", o.f);
    if (output_close(&o, false, &why) != 0)
        return 13;
    fputs("the program's last line\n", stdout);
    fflush(stdout);
    return temps_in(dir) ? 14 : 0;
}

static void program_stdout_appended(void **state)
{
    const char *spellings[] = { NULL, "/dev/stdout", "/proc/self/fd/1" };
    char p[PATH_MAX];
    struct stat before, after;

    (void)state;
    path_in(p, dir, "log");
    spellings[0] = p;
    for (size_t i = 0; i < sizeof spellings / sizeof spellings[0]; i++) {
        pid_t pid;
        int status = 0;

        put(p, "earlier\n", 0644);
        assert_int_equal(stat(p, &before), 0);
        fflush(NULL);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0)
            _exit(stdout_case(p, spellings[i]));
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
        assert_string_equal(slurp(p), "earlier\nthe program's line\nreport\nthe program's last line\n");
        assert_int_equal(stat(p, &after), 0);
        assert_true(after.st_ino == before.st_ino);
    }
}

/* Snapshots and lines (KTIME_INTERVAL, KTIME_PROM, KTIME_SERIES) never go to the program's
 * stdout, under any spelling: its file is left as it was. */
static int snapshot_stdout_case(const char *p, const char *spelling)
{
    struct output o;
    const char *why = NULL;
    int fd = open(p, O_WRONLY | O_APPEND);

    if (fd < 0 || dup2(fd, 1) != 1)
        return 10;
    close(fd);
    log_note_stdio();
    if (output_open_snapshot(&o, spelling, &why) == 0)
        return 11;
    if (!strstr(why, "stdout or stderr"))
        return 12;
    if (output_open_lines(spelling, &why) >= 0)
        return 13;
    if (!strstr(why, "stdout or stderr"))
        return 14;
    return temps_in(dir) ? 15 : 0;
}

static void snapshot_never_to_stdout(void **state)
{
    const char *spellings[] = { NULL, "/dev/stdout", "/proc/self/fd/1" };
    char p[PATH_MAX];

    (void)state;
    path_in(p, dir, "log");
    spellings[0] = p;
    for (size_t i = 0; i < sizeof spellings / sizeof spellings[0]; i++) {
        pid_t pid;
        int status = 0;

        put(p, "earlier\n", 0644);
        fflush(NULL);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0)
            _exit(snapshot_stdout_case(p, spellings[i]));
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
        assert_string_equal(slurp(p), "earlier\n");
    }
}

/* A snapshot replaces its file whole each time, never to a FIFO or a device. */
static void snapshot_replaced_whole(void **state)
{
    char p[PATH_MAX], f[PATH_MAX];
    struct output o;
    const char *why = NULL;

    (void)state;
    path_in(p, dir, "snap.json");
    for (int i = 0; i < 3; i++) {
        struct stat st;
        assert_int_equal(output_open_snapshot(&o, p, &why), 0);
        assert_true(o.replace);
        fprintf(o.f, "snapshot %d\n", i);
        /* Until it is complete, the name holds the last one whole. */
        if (i > 0)
            assert_int_equal(strcmp(slurp(p), i == 1 ? "snapshot 0\n" : "snapshot 1\n"), 0);
        assert_int_equal(output_close(&o, false, &why), 0);
        assert_int_equal(stat(p, &st), 0);
    }
    assert_string_equal(slurp(p), "snapshot 2\n");
    assert_false(temps_in(dir));
    path_in(f, dir, "fifo");
    assert_int_equal(mkfifo(f, 0644), 0);
    assert_int_equal(output_open_snapshot(&o, f, &why), -1);
    assert_non_null(strstr(why, "FIFO or a device"));
    assert_int_equal(output_open_snapshot(&o, "/dev/null", &why), -1);
    assert_int_equal(output_open_lines(f, &why), -1);
    assert_string_equal(why, "is not a regular file");
}

/* Lines appended through the run: made when absent, appended after what is there. */
static void lines_appended(void **state)
{
    char p[PATH_MAX], l[PATH_MAX];
    const char *why = NULL;
    struct stat st;
    mode_t old = umask(027);
    int fd;

    (void)state;
    path_in(p, dir, "series.jsonl");
    fd = output_open_lines(p, &why);
    umask(old);
    assert_true(fd >= 0);
    assert_int_equal(fstat(fd, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0640);
    assert_int_equal(output_append_line(fd, "one\n", 4), 0);
    close(fd);
    fd = output_open_lines(p, &why);
    assert_true(fd >= 0);
    assert_int_equal(output_append_line(fd, "two\n", 4), 0);
    close(fd);
    assert_string_equal(slurp(p), "one\ntwo\n");
    /* Through a link, to its file; a write-protected file is refused. */
    path_in(l, dir, "link");
    assert_int_equal(symlink(p, l), 0);
    fd = output_open_lines(l, &why);
    assert_true(fd >= 0);
    assert_int_equal(output_append_line(fd, "three\n", 6), 0);
    close(fd);
    assert_string_equal(slurp(p), "one\ntwo\nthree\n");
    assert_int_equal(chmod(p, 0444), 0);
    assert_int_equal(output_open_lines(p, &why), -1);
    assert_non_null(strstr(why, "write-protected"));
}

/* Descriptor 2 closed and reused by the program for a file of its own after start-up: that
 * file is not the program's stderr, and not replaced through /dev/stderr either. */
static int reused_stderr_case(const char *data)
{
    struct output o;
    const char *why = NULL;
    int fd;

    log_note_stdio();
    close(2);
    fd = open(data, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd != 2)
        return 10;
    if (write(2, "data\n", 5) != 5)
        return 11;
    if (log_stdio_unchanged(2))
        return 12;
    if (output_open(&o, "/dev/stderr", 1000, &why) == 0)
        return 13;
    log_msg(LOG_WARN, "never seen");
    return 0;
}

static void reused_stderr_left_alone(void **state)
{
    char data[PATH_MAX];
    pid_t pid;
    int status = 0;

    (void)state;
    path_in(data, dir, "data");
    fflush(NULL);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        _exit(reused_stderr_case(data));
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_string_equal(slurp(data), "data\n");
}

/* A file size limit with SIGXFSZ at its default action (death): output_open holds it, the
 * write fails with EFBIG and the process lives on; the signal is not left pending, the
 * thread's mask is restored. In a child, which would die otherwise. */
static int fsize_case(const char *p)
{
    char big[4096];
    struct output o;
    const char *why = NULL;
    struct rlimit small = { 1024, RLIM_INFINITY };
    sigset_t mask, pending;

    signal(SIGXFSZ, SIG_DFL);
    memset(big, 'x', sizeof big);
    if (setrlimit(RLIMIT_FSIZE, &small) != 0)
        return 10;
    if (output_open(&o, p, 1000, &why) != 0)
        return 11;
    for (int i = 0; i < 16; i++)
        fwrite(big, 1, sizeof big, o.f);
    if (output_close(&o, false, &why) != -1 || strcmp(why, strerror(EFBIG)) != 0)
        return 12;
    sigpending(&pending);
    pthread_sigmask(SIG_BLOCK, NULL, &mask);
    if (sigismember(&pending, SIGXFSZ) || sigismember(&mask, SIGXFSZ))
        return 13;
    return 0;
}

static void fsize_limit_does_not_kill(void **state)
{
    char p[PATH_MAX];
    pid_t pid;
    int status = 0;

    (void)state;
    path_in(p, dir, "r.txt");
    put(p, "old report\n", 0644);
    fflush(NULL);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        _exit(fsize_case(p));
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_string_equal(slurp(p), "old report\n");
    assert_int_equal(temps_in(dir), 0);
}

/* output_open_stream and output_write (KTIME_DUMP_SAMPLES): a FIFO with no reader refused at
 * once; a reader that leaves gives EPIPE, not SIGPIPE; a new file appears whole at close. */
static void stream_writes(void **state)
{
    char p[PATH_MAX], f[PATH_MAX], big[4096];
    struct output o;
    const char *why = NULL;
    int rd;

    (void)state;
    path_in(p, dir, "fifo");
    assert_int_equal(mkfifo(p, 0644), 0);
    assert_int_equal(output_open_stream(&o, p, &why), -1);
    assert_string_equal(why, "is a FIFO with no reader");

    rd = open(p, O_RDONLY | O_NONBLOCK);
    assert_true(rd >= 0);
    assert_int_equal(output_open_stream(&o, p, &why), 0);
    close(rd);
    signal(SIGPIPE, SIG_DFL);
    memset(big, 'x', sizeof big);
    assert_int_equal(output_write(&o, big, sizeof big, 100), -1);
    assert_int_equal(errno, EPIPE);
    output_close(&o, true, &why);

    path_in(f, dir, "samples.txt");
    assert_int_equal(output_open_stream(&o, f, &why), 0);
    assert_int_equal(output_write(&o, "one\n", 4, 100), 0);
    assert_int_equal(access(f, F_OK), -1); /* nothing at the name until it is complete */
    assert_int_equal(output_write(&o, "two\n", 4, 100), 0);
    assert_int_equal(output_close(&o, false, &why), 0);
    assert_string_equal(slurp(f), "one\ntwo\n");
    assert_int_equal(temps_in(dir), 0);
}

/* A FIFO nobody reads: refused at once (the old code blocked in open forever). */
static void fifo_without_reader(void **state)
{
    char p[PATH_MAX];
    struct output o;
    const char *why = NULL;
    double t0;

    (void)state;
    path_in(p, dir, "fifo");
    assert_int_equal(mkfifo(p, 0644), 0);
    t0 = now_ms();
    assert_int_equal(output_open(&o, p, 1000, &why), -1);
    assert_true(now_ms() - t0 < 500);
    assert_string_equal(why, "is a FIFO with no reader");
}

/* A FIFO with a reader gets the report, written in place. */
static void fifo_with_reader(void **state)
{
    char p[PATH_MAX], buf[64];
    struct output o;
    const char *why = NULL;
    int rd;
    ssize_t n;

    (void)state;
    path_in(p, dir, "fifo");
    assert_int_equal(mkfifo(p, 0644), 0);
    rd = open(p, O_RDONLY | O_NONBLOCK);
    assert_true(rd >= 0);
    assert_int_equal(output_open(&o, p, 1000, &why), 0);
    assert_false(o.replace);
    fputs("report\n", o.f);
    assert_int_equal(output_close(&o, false, &why), 0);
    n = read(rd, buf, sizeof buf - 1);
    close(rd);
    assert_int_equal(n, 7);
    buf[n] = '\0';
    assert_string_equal(buf, "report\n");
}

/* A reader that never reads: once the pipe is full, writing gives up at the deadline
 * (timeout_ms after the open) instead of blocking the exit for good. */
static void fifo_reader_never_reads(void **state)
{
    char p[PATH_MAX], big[4096];
    struct output o;
    const char *why = NULL;
    double t0, took;
    int rd;

    (void)state;
    path_in(p, dir, "fifo");
    assert_int_equal(mkfifo(p, 0644), 0);
    rd = open(p, O_RDONLY | O_NONBLOCK);
    assert_true(rd >= 0);
    memset(big, 'r', sizeof big);
    t0 = now_ms();
    assert_int_equal(output_open(&o, p, 300, &why), 0);
    for (int i = 0; i < 256; i++) /* 1 MiB, far more than a pipe holds */
        fwrite(big, 1, sizeof big, o.f);
    assert_int_equal(output_close(&o, false, &why), -1);
    took = now_ms() - t0;
    close(rd);
    assert_string_equal(why, strerror(ETIMEDOUT));
    assert_true(took >= 250);
    assert_true(took < 2000);
}

static void directory_refused(void **state)
{
    struct output o;
    const char *why = NULL;

    (void)state;
    assert_int_equal(output_open(&o, dir, 1000, &why), -1);
    assert_string_equal(why, "is a directory");
    assert_int_equal(temps_in(dir), 0);
}

static void socket_refused(void **state)
{
    struct sockaddr_un a;
    struct output o;
    const char *why = NULL;
    int s = socket(AF_UNIX, SOCK_STREAM, 0);

    (void)state;
    assert_true(s >= 0);
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    assert_true((size_t)snprintf(a.sun_path, sizeof a.sun_path, "%s/sock", dir) < sizeof a.sun_path);
    assert_int_equal(bind(s, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(s, 1), 0);
    assert_int_equal(output_open(&o, a.sun_path, 1000, &why), -1);
    close(s);
    assert_string_equal(why, "is a socket");
}

/* Character devices are written in place: /dev/null takes everything, /dev/full fails
 * every write (ENOSPC), which output_close reports. */
static void dev_null_written(void **state)
{
    struct output o;
    const char *why = NULL;

    (void)state;
    assert_int_equal(output_open(&o, "/dev/null", 1000, &why), 0);
    assert_false(o.replace);
    fputs("report\n", o.f);
    assert_int_equal(output_close(&o, false, &why), 0);
}

static void dev_full_fails(void **state)
{
    struct output o;
    const char *why = NULL;

    (void)state;
    if (access("/dev/full", W_OK) != 0) {
        skip();
        return;
    }
    assert_int_equal(output_open(&o, "/dev/full", 1000, &why), 0);
    fputs("report\n", o.f);
    assert_int_equal(output_close(&o, false, &why), -1);
    assert_string_equal(why, strerror(ENOSPC));
}

/* A name in a directory that does not exist: refused with the reason. */
static void missing_directory(void **state)
{
    char p[PATH_MAX];
    struct output o;
    const char *why = NULL;

    (void)state;
    path_in(p, dir, "no/such/dir/r.txt");
    assert_int_equal(output_open(&o, p, 1000, &why), -1);
    /* The reason says what could not be done, and why (the warning reads "KTIME_OUTPUT '...'
     * cannot be created: No such file or directory"). */
    char want[256];
    snprintf(want, sizeof want, "cannot be created: %s", strerror(ENOENT));
    assert_string_equal(why, want);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(new_file_through_a_temporary, setup, teardown),
        cmocka_unit_test_setup_teardown(existing_file_replaced_mode_kept, setup, teardown),
        cmocka_unit_test_setup_teardown(caller_failure_keeps_old_file, setup, teardown),
        cmocka_unit_test_setup_teardown(full_disk_keeps_old_file, setup, teardown),
        cmocka_unit_test_setup_teardown(link_followed, setup, teardown),
        cmocka_unit_test_setup_teardown(sticky_dir_links, setup, teardown),
        cmocka_unit_test_setup_teardown(read_only_dir_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(write_protected_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(program_stdout_appended, setup, teardown),
        cmocka_unit_test_setup_teardown(reused_stderr_left_alone, setup, teardown),
        cmocka_unit_test_setup_teardown(snapshot_never_to_stdout, setup, teardown),
        cmocka_unit_test_setup_teardown(snapshot_replaced_whole, setup, teardown),
        cmocka_unit_test_setup_teardown(lines_appended, setup, teardown),
        cmocka_unit_test_setup_teardown(fsize_limit_does_not_kill, setup, teardown),
        cmocka_unit_test_setup_teardown(stream_writes, setup, teardown),
        cmocka_unit_test_setup_teardown(fifo_without_reader, setup, teardown),
        cmocka_unit_test_setup_teardown(fifo_with_reader, setup, teardown),
        cmocka_unit_test_setup_teardown(fifo_reader_never_reads, setup, teardown),
        cmocka_unit_test_setup_teardown(directory_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(socket_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(dev_null_written, setup, teardown),
        cmocka_unit_test_setup_teardown(dev_full_fails, setup, teardown),
        cmocka_unit_test_setup_teardown(missing_directory, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
