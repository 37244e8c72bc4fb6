/* output.h - opens and completes the report file so that the program's exit never hangs on
 * it, a reader never sees half a report, and no link is followed where another user could
 * have planted it. No CUDA. */
#ifndef KTIME_OUTPUT_H
#define KTIME_OUTPUT_H

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>

struct output {
    FILE *f;                /* write the report here */
    bool replace;           /* f is a temporary file, renamed over dest by output_close() */
    char tmp[PATH_MAX];     /* the temporary's name */
    char dest[PATH_MAX];    /* where a complete report lands */
    double deadline_ms;     /* a pipe or device: writes give up at this CLOCK_MONOTONIC ms */
};

/* Opens path for a report, never blocking:
 *  - a regular file, or a name that does not exist yet: a new temporary file in the same
 *    directory (mode 0666 less the umask, or the mode of the file it replaces), renamed
 *    over path once complete. Where no file can be made in the directory, path itself is
 *    truncated and written instead.
 *  - a FIFO (with a reader) or a character device (a terminal, /dev/null): opened
 *    non-blocking, every write bounded by timeout_ms in all.
 *  - a FIFO with no reader, a socket, a directory or anything else: refused.
 *  - a symbolic link is followed, except the one the kernel's protected-symlinks rule would
 *    refuse (applied here whatever the system's setting): a link in a world-writable sticky
 *    directory (/tmp) owned neither by this user nor by the directory's owner.
 * Returns 0 with o->f ready, or -1 with *why set to a phrase for the warning ("is a FIFO
 * with no reader", ...). Any thread; at exit. */
int output_open(struct output *o, const char *path, long timeout_ms, const char **why);

/* Completes the report: flushes, and renames a temporary into place. write_failed says the
 * caller's own writing failed already. Returns 0, or -1 with *why set; on failure a
 * temporary is removed and the file it was to replace is left as it was. */
int output_close(struct output *o, bool write_failed, const char **why);

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
