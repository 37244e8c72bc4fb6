/* jsonout.h - the JSON text ktime writes (reports, traces, conditions): strings that are
 * valid UTF-8 whatever bytes a program's names hold. No CUDA; any thread. */
#ifndef KTIME_JSONOUT_H
#define KTIME_JSONOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* The length of the well-formed UTF-8 sequence at p (Unicode 15, table 3-7: no overlong
 * forms, no surrogates, nothing past U+10FFFF), or 0 when p starts none. A NUL ends any
 * sequence, so this never reads past the string's end. */
size_t utf8_seq(const unsigned char *p);

/* Whether s (NULL: "") is well-formed UTF-8 throughout. */
bool utf8_ok(const char *s);

/* Writes s (NULL: "") to f as a JSON string: quoted, with '"', '\\' and control characters
 * escaped. JSON text is UTF-8 (RFC 8259), and names come from the program as any bytes: each
 * byte that does not begin a well-formed UTF-8 sequence (stray, overlong, surrogate, past
 * U+10FFFF, cut short) is written as \ufffd, so the output is always valid. */
void json_string(FILE *f, const char *s);

/* Writes s's bytes as a JSON string of hex digits (what a report adds beside a string that
 * is not well-formed UTF-8, so that no byte is lost). */
void json_hex(FILE *f, const char *s);

#endif
