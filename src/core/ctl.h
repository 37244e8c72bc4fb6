/* ctl.h - the control channel of `ktime ctl`: a FIFO per process in a private per-user
 * directory, which the drain thread reads without blocking every CTL_POLL_MS; the answers go
 * to a file beside it, a line per request. Both ends are here: the library's (ctl_open,
 * ctl_poll, ctl_answer, ctl_close) and the client's (ctl_send, ctl_find_answer), so that
 * they speak one protocol. No signal, no socket, nothing the program could notice. No CUDA.
 *
 * The directory: $XDG_RUNTIME_DIR/ktime when XDG_RUNTIME_DIR names a directory of this user's
 * that no one else may enter, else /tmp/ktime-UID; made with mode 0700, and used only while it
 * is a directory (not a link) owned by this user with no access for group or others.
 * In it: PID.ctl, the FIFO (mode 0600), and PID.answers. A request is one line,
 * "ID WORD\n" (ID: up to 40 of [A-Za-z0-9._-], chosen by the client); its answer one line,
 * "ID ok TEXT\n" or "ID refused TEXT\n". */
#ifndef KTIME_CTL_H
#define KTIME_CTL_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "every.h"

/* How often the library reads its FIFO: a command takes effect within this, plus the drain
 * thread's pass (docs/always-on.md). */
#define CTL_POLL_MS 100
#define CTL_ID_MAX 40
#define CTL_LINE_MAX 128

enum ctl_cmd {
    CTL_ON,        /* time launches again */
    CTL_OFF,       /* count launches without timing them */
    CTL_SNAPSHOT,  /* write the report (every format asked for) now */
    CTL_RESET,     /* start the counts and samples afresh */
    CTL_STATUS,    /* say how things stand */
    CTL_BAD        /* not a command: refused */
};

/* The words of the commands, by enum ctl_cmd (CTL_BAD: NULL). */
extern const char *const ctl_words[CTL_BAD + 1];

struct ctl_request {
    char id[CTL_ID_MAX + 1];
    enum ctl_cmd cmd;
    char word[24];         /* the word as sent (cut short), for a refusal's message */
};

struct ctl {
    int fd;                /* the FIFO, opened for reading and writing, non-blocking; -1 */
    char fifo[PATH_MAX];
    char answers[PATH_MAX];
    char buf[4 * CTL_LINE_MAX];
    size_t len;            /* bytes in buf */
    bool skipping;         /* inside a line too long to be a request: dropped to its end */
    struct every poll;
};

/* The control directory for this user (geteuid) into buf (n bytes): xdg is
 * $XDG_RUNTIME_DIR (NULL: unset). With create, makes it (mode 0700) when absent. Returns 0,
 * or -1 with *why set (a phrase, "... is not a private directory of yours (owner 0, mode
 * 0777)"; it may point into buf's tail, so read it before reusing buf). Any thread. */
int ctl_dir(char *buf, size_t n, const char *xdg, bool create, const char **why);

/* Opens process pid's channel in dir: removes what a former process of the same pid left
 * there, makes the FIFO and opens it. The first read is due at now_ms + CTL_POLL_MS.
 * Returns 0, or -1 with *why (c->fd is then -1). */
int ctl_open(struct ctl *c, const char *dir, long pid, double now_ms, const char **why);

/* Reads the FIFO when a read is due at now_ms (or a line is waiting already) and gives the
 * next request in *q. Returns 1 with *q filled, 0 when there is none. A line that is not
 * "ID WORD" with a valid ID is dropped; an unknown word comes as CTL_BAD. Never blocks. One
 * thread (the drain thread). */
int ctl_poll(struct ctl *c, double now_ms, struct ctl_request *q);

/* Appends the answer to q ("ID ok TEXT" or "ID refused TEXT"; TEXT on one line, cut at 400
 * bytes). Returns 0, or -1 when it could not be written. */
int ctl_answer(struct ctl *c, const struct ctl_request *q, bool ok, const char *text);

/* Closes the channel and removes its files. */
void ctl_close(struct ctl *c);

/* Whether s is a valid request ID. */
bool ctl_id_ok(const char *s);

/* ---- the client (tools/ktime-ctl) ---- */

/* Sends "ID WORD" to process pid's channel in dir, never blocking. Returns 0, or -1 with
 * *why: no channel there (errno ENOENT), nothing reads it (ENXIO: its process is gone), not a
 * FIFO of this user's (EPERM), its buffer full (EAGAIN: the process stopped reading). */
int ctl_send(const char *dir, long pid, const char *id, const char *word, const char **why);

/* Looks for the answer to request id in process pid's answers in dir. Returns 1 with *ok and
 * text (n bytes, always terminated) filled, 0 while there is none yet, -1 when the answers
 * cannot be read (other than absent). */
int ctl_find_answer(const char *dir, long pid, const char *id, bool *ok, char *text, size_t n);

#endif
