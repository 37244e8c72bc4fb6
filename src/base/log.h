/* log.h - ktime's messages: stderr only, prefixed "ktime:", filtered by KTIME_LOG; and the two
 * rules every write of ktime's to the program's descriptors follows: never into a descriptor
 * that no longer names the file it named at start-up, and never raising SIGPIPE or SIGXFSZ. */
#ifndef KTIME_LOG_H
#define KTIME_LOG_H

#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

enum log_level { LOG_QUIET = 0, LOG_WARN = 1, LOG_INFO = 2, LOG_DEBUG = 3 };

/* A message kind, not a level: shown from KTIME_LOG=warn up like a warning, but without
 * "warning:" (what a run says it did: "ktime: report written to PATH"). */
#define LOG_NOTICE 4

/* The level in force; set once by log_set_level() at start-up, read by any thread. */
extern int log_level;

/* Sets the level. Called by config loading, before any other thread exists. */
void log_set_level(int level);

/* Formats one message and writes it to stderr with a single write(2), so lines from
 * several threads never interleave. Says nothing when descriptor 2 no longer names the
 * stderr the program started with (log_stdio_unchanged). Safe from any thread; never
 * allocates; raises no SIGPIPE or SIGXFSZ in the program (log_hold_signals). */
void log_msg(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define log_warn(...)  do { if (log_level >= LOG_WARN) log_msg(LOG_WARN, __VA_ARGS__); } while (0)
#define log_notice(...) do { if (log_level >= LOG_WARN) log_msg(LOG_NOTICE, __VA_ARGS__); } while (0)
#define log_info(...)  do { if (log_level >= LOG_INFO) log_msg(LOG_INFO, __VA_ARGS__); } while (0)
#define log_debug(...) do { if (log_level >= LOG_DEBUG) log_msg(LOG_DEBUG, __VA_ARGS__); } while (0)

/* Records which files descriptors 1 and 2 name (device, inode and type; or that they are
 * closed), so that ktime never writes into a descriptor the program closed and reused for a
 * file of its own. Called once by the constructor, before any other thread exists; until
 * then both count as unchanged. */
void log_note_stdio(void);

/* Whether descriptor fd (1 or 2) is open and names the file it named when log_note_stdio()
 * ran: false when it was closed then, is closed now, or names another file. Any thread;
 * async-signal-safe (one fstat). */
bool log_stdio_unchanged(int fd);

/* The file descriptor fd (1 or 2) named at start-up: true with *dev and *ino set, false
 * when it was closed then. Before log_note_stdio() ran, the file it names now. */
bool log_stdio_at_start(int fd, dev_t *dev, ino_t *ino);

/* A hold on SIGPIPE and SIGXFSZ for the calling thread while ktime writes: a write to a pipe
 * whose reader left, or past RLIMIT_FSIZE, then fails with EPIPE or EFBIG instead of killing
 * the program or running its handler, whatever its disposition. Both signals are directed
 * at the thread whose write raised them. */
struct log_hold {
    sigset_t mask;    /* the thread's signal mask before the hold */
    sigset_t pending; /* signals pending before the hold: the program's, left as they are */
};

/* Blocks SIGPIPE and SIGXFSZ on the calling thread. Async-signal-safe. */
void log_hold_signals(struct log_hold *h);

/* Ends a hold, on the thread that took it: a SIGPIPE or SIGXFSZ that became pending during
 * the hold (ktime's write raised it) is taken and discarded, one pending before is left,
 * and the thread's mask is restored. Async-signal-safe; errno is kept. */
void log_release_signals(const struct log_hold *h);

#endif
