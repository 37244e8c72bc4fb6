/* ktime-ctl - `ktime ctl PID on|off|snapshot|reset|status`: sends a command to a process that
 * runs under ktime, through its control channel (src/core/ctl.h), and prints its answer.
 *
 * usage: ktime-ctl [--wait SECONDS] PID on|off|snapshot|reset|status
 * Exit status: 0 done; 1 refused, or the process has no channel, is another user's, or ended;
 * 2 usage; 3 no answer within the wait (default 5 s).
 * The channel's directory is looked for where the process would have made it: its own
 * XDG_RUNTIME_DIR (/proc/PID/environ), this shell's, then /tmp/ktime-UID. A process that has
 * libktime loaded but no channel yet (it opens with the first timed launch) is waited for
 * within the same wait. */
#include "ac_config.h" /* autoconf: _GNU_SOURCE */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ctl.h"

static int usage(void)
{
    fprintf(stderr, "usage: ktime ctl [--wait SECONDS] PID on|off|snapshot|reset|status\n"
                    "  on        time launches again\n"
                    "  off       count launches without timing them (paused)\n"
                    "  snapshot  write the report (every format asked for) now\n"
                    "  reset     start the counts and samples afresh\n"
                    "  status    say whether timing is on, and what was written\n");
    return 2;
}

/* XDG_RUNTIME_DIR from process pid's environment at its start, into buf; false if none. */
static bool target_xdg(long pid, char *buf, size_t n)
{
    char path[64], env[65536];
    ssize_t got, len = 0;
    int fd;

    snprintf(path, sizeof path, "/proc/%ld/environ", pid);
    if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
        return false;
    while (len < (ssize_t)sizeof env - 1 &&
           (got = read(fd, env + len, sizeof env - 1 - (size_t)len)) > 0)
        len += got;
    close(fd);
    env[len] = '\0';
    for (char *p = env; p < env + len; p += strlen(p) + 1)
        if (!strncmp(p, "XDG_RUNTIME_DIR=", 16)) {
            snprintf(buf, n, "%s", p + 16);
            return true;
        }
    return false;
}

/* Whether process pid has libktime loaded (/proc/PID/maps). */
static bool has_ktime(long pid)
{
    char path[64], line[4096];
    bool found = false;
    FILE *f;

    snprintf(path, sizeof path, "/proc/%ld/maps", pid);
    if (!(f = fopen(path, "re")))
        return true; /* cannot tell: look for the channel anyway */
    while (!found && fgets(line, sizeof line, f))
        found = strstr(line, "/libktime") != NULL;
    fclose(f);
    return found;
}

static void nap_ms(long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

    nanosleep(&ts, NULL);
}

/* The directory holding pid's channel into dir; false (looked: where it looked) if none. */
static bool find_channel(long pid, char *dir, size_t n, char *looked, size_t ln)
{
    char xdgs[2][PATH_MAX];
    const char *cand[3];
    int nc = 0;

    if (target_xdg(pid, xdgs[0], sizeof xdgs[0]))
        cand[nc++] = xdgs[0];
    if (getenv("XDG_RUNTIME_DIR")) {
        snprintf(xdgs[1], sizeof xdgs[1], "%s", getenv("XDG_RUNTIME_DIR"));
        cand[nc++] = xdgs[1];
    }
    cand[nc++] = NULL; /* /tmp/ktime-UID */
    looked[0] = '\0';
    for (int i = 0; i < nc; i++) {
        char d[PATH_MAX], fifo[PATH_MAX + 32];
        const char *why = NULL;
        struct stat st;
        if (ctl_dir(d, sizeof d, cand[i], false, &why) != 0) {
            if (!strstr(looked, d))
                snprintf(looked + strlen(looked), ln - strlen(looked), "%s%s (%s)",
                         *looked ? ", " : "", d, why);
            continue;
        }
        snprintf(fifo, sizeof fifo, "%s/%ld.ctl", d, pid);
        if (lstat(fifo, &st) == 0 && S_ISFIFO(st.st_mode)) {
            snprintf(dir, n, "%s", d);
            return true;
        }
        if (!strstr(looked, d))
            snprintf(looked + strlen(looked), ln - strlen(looked), "%s%s", *looked ? ", " : "", d);
    }
    return false;
}

int main(int argc, char **argv)
{
    long wait_s = 5, pid;
    char dir[PATH_MAX], looked[4 * PATH_MAX], id[CTL_ID_MAX + 1], text[512], proc[64], *end;
    const char *why = NULL, *word;
    struct timespec now;
    struct stat st;
    int i = 1;

    if (argc > 2 && !strncmp(argv[1], "--wait", 6)) {
        const char *v = argv[1][6] == '=' ? argv[1] + 7 : argv[2];
        wait_s = strtol(v, &end, 10);
        if (!*v || *end || wait_s < 0 || wait_s > 3600)
            return usage();
        i = argv[1][6] == '=' ? 2 : 3;
    }
    if (argc - i != 2)
        return usage();
    pid = strtol(argv[i], &end, 10);
    word = argv[i + 1];
    if (!*argv[i] || *end || pid <= 0)
        return usage();
    bool known = false;
    for (int c = 0; c < CTL_BAD; c++)
        known |= !strcmp(word, ctl_words[c]);
    if (!known) {
        fprintf(stderr, "ktime ctl: '%s' is not a command\n", word);
        return usage();
    }
    snprintf(proc, sizeof proc, "/proc/%ld", pid);
    if (stat(proc, &st) != 0) {
        fprintf(stderr, "ktime ctl: no process %ld\n", pid);
        return 1;
    }
    if (st.st_uid != getuid() || st.st_uid != geteuid()) {
        fprintf(stderr, "ktime ctl: process %ld belongs to another user (uid %lu); ktime ctl "
                        "controls only your own processes\n", pid, (unsigned long)st.st_uid);
        return 1;
    }
    if (!has_ktime(pid)) {
        fprintf(stderr, "ktime ctl: process %ld does not run under ktime (no libktime in it)\n",
                pid);
        return 1;
    }
    for (long waited_ms = 0; !find_channel(pid, dir, sizeof dir, looked, sizeof looked);
         waited_ms += 20) {
        if (waited_ms >= wait_s * 1000 || (kill((pid_t)pid, 0) != 0 && errno == ESRCH)) {
            fprintf(stderr, "ktime ctl: process %ld has no ktime control channel (KTIME_CTL=0, "
                            "or no kernel launched yet); looked in %s\n", pid, looked);
            return 1;
        }
        nap_ms(20);
    }
    clock_gettime(CLOCK_MONOTONIC, &now);
    snprintf(id, sizeof id, "%ld-%lld%09ld", (long)getpid(), (long long)now.tv_sec, now.tv_nsec);
    if (ctl_send(dir, pid, id, word, &why) != 0) {
        fprintf(stderr, "ktime ctl: %s/%ld.ctl %s\n", dir, pid, why);
        return 1;
    }
    for (long waited_ms = 0;; waited_ms += 20) {
        bool ok = false;
        int r = ctl_find_answer(dir, pid, id, &ok, text, sizeof text);
        if (r == 1) {
            if (ok)
                printf("ktime ctl: process %ld: %s\n", pid, text);
            else
                fprintf(stderr, "ktime ctl: process %ld refused: %s\n", pid, text);
            return ok ? 0 : 1;
        }
        if (kill((pid_t)pid, 0) != 0 && errno == ESRCH) {
            fprintf(stderr, "ktime ctl: process %ld ended before it answered\n", pid);
            return 1;
        }
        if (waited_ms >= wait_s * 1000) {
            fprintf(stderr, "ktime ctl: no answer from process %ld within %ld s (stopped, or its "
                            "ktime is stuck)\n", pid, wait_s);
            return 3;
        }
        nap_ms(20);
    }
}
