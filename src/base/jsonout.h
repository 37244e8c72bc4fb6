/* jsonout.h - the JSON text ktime writes (reports, traces, conditions): strings that are
 * valid UTF-8 whatever bytes a program's names hold. No CUDA; any thread. */
#ifndef KTIME_JSONOUT_H
#define KTIME_JSONOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The length of the well-formed UTF-8 sequence at p (Unicode 15, table 3-7: no overlong
 * forms, no surrogates, nothing past U+10FFFF), or 0 when p starts none. A NUL ends any
 * sequence, so this never reads past the string's end. */
size_t utf8_seq(const unsigned char *p);

/* utf8_seq for the avail bytes at p, which need not end in a NUL: 0 also when the sequence
 * would run past them. */
size_t utf8_seq_n(const unsigned char *p, size_t avail);

/* Writes code point c (at most U+10FFFF) as UTF-8 at out (room for 4 bytes). Returns the
 * bytes written. */
size_t utf8_put(char *out, unsigned c);

/* Whether s (NULL: "") is well-formed UTF-8 throughout. */
bool utf8_ok(const char *s);

/* Writes s (NULL: "") to f as it is, but for each byte that begins no well-formed UTF-8
 * sequence, written as U+FFFD. */
void utf8_write_valid(FILE *f, const char *s);

/* Writes s (NULL: "") to f as a JSON string: quoted, with '"', '\\' and control characters
 * escaped. JSON text is UTF-8 (RFC 8259), and names come from the program as any bytes: each
 * byte that does not begin a well-formed UTF-8 sequence (stray, overlong, surrogate, past
 * U+10FFFF, cut short) is written as \ufffd, so the output is always valid. */
void json_string(FILE *f, const char *s);

/* Writes s's bytes as a JSON string of hex digits (what a report adds beside a string that
 * is not well-formed UTF-8, so that no byte is lost). */
void json_hex(FILE *f, const char *s);

/* ---- the emitter: objects and arrays with their commas, in the layout the caller picks ----
 *
 * A container is written in one of three layouts:
 *   JW_BLOCK   each member on a line of its own at `indent` spaces, the closing bracket on a
 *              line at `close_indent` ("[]" or "{}" when empty);
 *   JW_INLINE  on one line: `{ "a": 1, "b": 2 }` and `[1, 2]`;
 *   JW_TIGHT   on one line, objects without the inner spaces: `{"a": 1, "b": 2}`.
 * In an inline or tight container, jw_break() puts the next member on a new line.
 * Keys are written as given (ASCII the caller knows); values through json_string() and
 * %.17g, so that a number reads back as the same double. One writer per thread. */
enum jw_layout { JW_BLOCK, JW_INLINE, JW_TIGHT };

#define JW_MAX_DEPTH 16

struct jw {
    FILE *f;
    int depth;              /* containers open */
    int brk;                /* >= 0: the next member starts a new line at this indent */
    struct {
        char close;         /* '}' or ']' */
        char layout;        /* enum jw_layout */
        int indent, close_indent;
        unsigned n;         /* members written */
    } lv[JW_MAX_DEPTH];
};

/* Starts a writer on f, at the top level (one value to come). */
void jw_init(struct jw *w, FILE *f);

/* Opens an object ('{') or array ('['): as a member `key` of the object open, or as the next
 * element (key NULL) of the array open or at the top. indent and close_indent matter to
 * JW_BLOCK only. Nesting deeper than JW_MAX_DEPTH writes nothing inside. */
void jw_open(struct jw *w, const char *key, char bracket, enum jw_layout layout, int indent,
             int close_indent);

/* Closes the container open last. */
void jw_close(struct jw *w);

/* The next member of the (inline or tight) container open starts a new line at indent. */
void jw_break(struct jw *w, int indent);

/* A member (key) or element (key NULL) of each type. jw_str writes NULL as ""; the _or_null
 * forms write null for NULL. jw_fixed writes v with `decimals` digits after the point. A
 * number that is not finite (NaN, infinity), which JSON cannot hold, is written null. */
void jw_str(struct jw *w, const char *key, const char *s);
void jw_str_or_null(struct jw *w, const char *key, const char *s);
void jw_num(struct jw *w, const char *key, double v);
void jw_fixed(struct jw *w, const char *key, double v, int decimals);
void jw_u64(struct jw *w, const char *key, uint64_t v);
void jw_i64(struct jw *w, const char *key, long long v);
void jw_bool(struct jw *w, const char *key, bool v);
void jw_null(struct jw *w, const char *key);
void jw_hex(struct jw *w, const char *key, const char *s);

/* `key_bytes`: s's bytes in hex, only when s is not well-formed UTF-8 (a report's names). */
void jw_bytes_member(struct jw *w, const char *key, const char *s);

#endif
