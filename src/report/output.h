/* output.h - opens and completes the report file so that the program's exit never hangs on
 * it, a reader never sees half a report, no link is followed where another user could have
 * planted it, and the program's own stdout, stderr and files are never damaged. No CUDA. */
#ifndef KTIME_OUTPUT_H
#define KTIME_OUTPUT_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "log.h"

struct output {
    FILE *f;                /* write the report here */
    int fd;                 /* the descriptor under f (output_write) */
    bool replace;           /* f is a temporary file, renamed over dest by output_close() */
    bool append;            /* f appends to the program's stdout or stderr, in place */
    bool held;              /* output_open() holds SIGPIPE and SIGXFSZ until output_close() */
    char tmp[PATH_MAX];     /* the temporary's name */
    char dest[PATH_MAX];    /* where a complete report lands */
    double deadline_ms;     /* a pipe or device: writes give up at this CLOCK_MONOTONIC ms */
    char why[192];          /* a reason output_open composed, for *why */
    struct log_hold hold;
};

/* Opens path for a report, never blocking:
 *  - the file the program's stdout or stderr named at start-up (/dev/stdout, /dev/stderr,
 *    /proc/self/fd/1, or its own name: the same device and inode): written in place at its
 *    end, neither truncated nor replaced; through descriptor 1 or 2 itself while it still
 *    names that file (the report lands where the program's next line would), after the
 *    program's pending stdout or stderr buffer (when its lock is free), else opened to
 *    append. For a pipe or terminal, that buffer is flushed too.
 *  - a regular file that descriptor 1 or 2 names now but did not at start-up (the program
 *    closed its stdout or stderr and reused the descriptor): refused.
 *  - a write-protected regular file (no write permission for this user, or no write bit in
 *    its mode at all, for root): refused, left as it is.
 *  - any other regular file, or a name that does not exist yet: a new temporary file in the
 *    same directory (mode 0666 less the umask, or the mode of the file it replaces), renamed
 *    over path once complete. Where no temporary can be made beside an existing file (a
 *    read-only directory), refused: it is never written in place, where a reader or a
 *    second writer could see half a report.
 *  - a FIFO (with a reader) or a character device (a terminal, /dev/null): opened
 *    non-blocking, every write bounded by timeout_ms in all.
 *  - a FIFO with no reader, a socket, a directory or anything else: refused.
 *  - a symbolic link is followed, except the one the kernel's protected-symlinks rule would
 *    refuse (applied here whatever the system's setting): a link in a world-writable sticky
 *    directory (/tmp) owned neither by this user nor by the directory's owner.
 * From a successful open to output_close(), the calling thread holds SIGPIPE and SIGXFSZ
 * (log_hold_signals): a write past RLIMIT_FSIZE or into a pipe whose reader left fails with
 * EFBIG or EPIPE. Returns 0 with o->f ready, or -1 with *why set to a phrase for the warning
 * ("is a FIFO with no reader", ...; it may point into o). Any thread; at exit. */
int output_open(struct output *o, const char *path, long timeout_ms, const char **why);

/* Like output_open(), for a file written again and again while the program runs (a snapshot
 * of the report, the Prometheus file): only ever a temporary renamed into place. Refused: the
 * file the program's stdout or stderr named at start-up, a FIFO, a device (and whatever
 * output_open() refuses). Any thread. */
int output_open_snapshot(struct output *o, const char *path, const char **why);

/* Opens path to append lines to through the whole run (KTIME_SERIES): a regular file, made
 * when absent (mode 0666 less the umask); a link followed as output_open() follows one.
 * Refused: the program's stdout or stderr (at start-up or now), a write-protected file,
 * anything not a regular file. Returns the descriptor (O_APPEND, O_CLOEXEC, non-blocking), or
 * -1 with *why (a phrase, valid until this thread's next call). Any thread. */
int output_open_lines(const char *path, const char **why);

/* Appends the n bytes at buf to fd in one write(2) where the file system allows (a line is
 * then whole or absent in the file, whatever happens to the process), holding SIGPIPE and
 * SIGXFSZ while it writes. Returns 0, or -1 with errno set. */
int output_append_line(int fd, const char *buf, size_t n);

/* Completes the report: flushes, and renames a temporary into place. write_failed says the
 * caller's own writing failed already. Returns 0, or -1 with *why set; on failure a
 * temporary is removed and the file it was to replace is left as it was. Ends the hold of
 * output_open() (the same thread). */
int output_close(struct output *o, bool write_failed, const char **why);

/* Like output_open(), for a file written through the whole run by one thread with
 * output_write() (KTIME_DUMP_SAMPLES), not through o->f: the program's stdio buffers are not
 * flushed, no signals are held past the call, and a pipe or device gets no deadline here.
 * output_close() completes it, on any thread. */
int output_open_stream(struct output *o, const char *path, const char **why);

/* Writes all n bytes to o's descriptor; for a pipe or device (non-blocking), waiting at most
 * timeout_ms in all for room. Holds SIGPIPE and SIGXFSZ while it writes. Returns 0, or -1
 * with errno set (ETIMEDOUT when the time ran out). Not mixed with writes through o->f. */
int output_write(struct output *o, const void *buf, size_t n, long timeout_ms);

/* Opens a new file at path that output_close_new() puts there only if nothing is there by
 * then (no file, link, FIFO or anything else is ever replaced): a temporary in the same
 * directory, or, where none can be made there, path itself created exclusively
 * (O_EXCL, never through a link). Returns 0 with o->f ready, 1 when path exists already
 * (only in the second case; the first finds out at close), or -1 with *why set. Any thread;
 * at exit. */
int output_open_new(struct output *o, const char *path, const char **why);

/* Completes a file of output_open_new(): flushes it and links the temporary to its name,
 * atomically and only where that name is free (link(2), or rename with RENAME_NOREPLACE on a
 * file system without hard links). Returns 0 when the file is in place, 1 when something
 * took the name first (nothing of this call's is left behind), -1 with *why set on any
 * other failure (likewise). */
int output_close_new(struct output *o, bool write_failed, const char **why);

#endif
