/* log.h - ktime's messages: stderr only, prefixed "ktime:", filtered by KTIME_LOG. */
#ifndef KTIME_LOG_H
#define KTIME_LOG_H

enum log_level { LOG_QUIET = 0, LOG_WARN = 1, LOG_INFO = 2, LOG_DEBUG = 3 };

/* A message kind, not a level: shown from KTIME_LOG=warn up like a warning, but without
 * "warning:" (what a run says it did: "ktime: report written to PATH"). */
#define LOG_NOTICE 4

/* The level in force; set once by log_set_level() at start-up, read by any thread. */
extern int log_level;

/* Sets the level. Called by config loading, before any other thread exists. */
void log_set_level(int level);

/* Formats one message and writes it to stderr with a single write(2), so lines from
 * several threads never interleave. Safe from any thread; never allocates. */
void log_msg(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define log_warn(...)  do { if (log_level >= LOG_WARN) log_msg(LOG_WARN, __VA_ARGS__); } while (0)
#define log_notice(...) do { if (log_level >= LOG_WARN) log_msg(LOG_NOTICE, __VA_ARGS__); } while (0)
#define log_info(...)  do { if (log_level >= LOG_INFO) log_msg(LOG_INFO, __VA_ARGS__); } while (0)
#define log_debug(...) do { if (log_level >= LOG_DEBUG) log_msg(LOG_DEBUG, __VA_ARGS__); } while (0)

#endif
