/* fuzzutil.h - what the fuzz targets share: a failed property aborts with a message, a
 * reader that splits the input into fields, checks of UTF-8 and JSON written apart from
 * ktime's own, and the log sink the targets link instead of src/base/log.c. */
#ifndef KTIME_FUZZUTIL_H
#define KTIME_FUZZUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The entry point libFuzzer calls (tests/fuzz/driver.c calls it without libFuzzer). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A property that must hold: when it does not, prints where and why to stderr and aborts,
 * so that libFuzzer (or driver.c) keeps the input as a crash. */
#define FUZZ_ASSERT(cond, ...)                                                             \
    do {                                                                                   \
        if (!(cond))                                                                       \
            fuzz_fail(__FILE__, __LINE__, #cond, __VA_ARGS__);                             \
    } while (0)
void fuzz_fail(const char *file, int line, const char *cond, const char *fmt, ...)
    __attribute__((noreturn, format(printf, 4, 5)));

/* Reads the input front to back. Missing bytes read as 0 / "". */
struct fuzz_in {
    const uint8_t *p;
    size_t n;
};
uint8_t fuzz_byte(struct fuzz_in *in);
uint64_t fuzz_u64(struct fuzz_in *in);
/* The bytes up to the next NUL (or the end), as a malloc'd string; never NULL. */
char *fuzz_field(struct fuzz_in *in);

/* The length of the well-formed UTF-8 sequence at p (at most `left` bytes), or 0. */
size_t fuzz_utf8_seq(const unsigned char *p, size_t left);
bool fuzz_utf8_valid(const char *s, size_t n);

/* Whether [s, s+n) is exactly one JSON value (RFC 8259), whitespace around it allowed,
 * every string UTF-8. On false, *why says what is wrong and *at where. */
bool fuzz_json_valid(const char *s, size_t n, const char **why, size_t *at);

/* Decodes the JSON string at s (its opening quote) into a malloc'd buffer (*len bytes,
 * NUL-terminated), or NULL when it is not one. *end: the byte after its closing quote. */
char *fuzz_json_string(const char *s, size_t n, size_t *len, size_t *end);

/* The log sink (src/base/log.h's interface): messages are formatted and counted, not printed
 * (FUZZ_VERBOSE=1 prints them). */
extern int fuzz_log_count;    /* messages since fuzz_log_reset() */
extern char fuzz_log_last[1024];
void fuzz_log_reset(void);

#endif
