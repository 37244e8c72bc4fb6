/* names.h - a program's strings (kernel names, the command line, host, device and range
 * names) as the text report, the CSV and the samples dump write them: shortened for the text
 * table's Kernel column, cut between UTF-8 characters, and escaped so that none can make a
 * line, a field or a terminal sequence of its own. */
#ifndef KTIME_NAMES_H
#define KTIME_NAMES_H

#include <stddef.h>
#include <stdio.h>

/* Shortens a demangled kernel name for a table column: drops the "void " return type
 * and the parameter list, then elides the middle of what is longer than width (at least 8),
 * between UTF-8 characters: the result is then width bytes, or up to 6 fewer.
 * Writes into out (size outsz). Returns 0 when out equals full, 1 when only the return
 * type or parameters were dropped, 2 when the middle was elided. Any thread. */
int report_short_name(const char *full, char *out, size_t outsz, size_t width);

/* The length of s cut to at most max bytes, between UTF-8 characters: a cut that would fall
 * inside a well-formed sequence moves back to its start. Any thread. */
size_t report_utf8_cut(const char *s, size_t max);

/* How the text report, the CSV and the samples dump write one character of a program's string
 * (a kernel name, an argument): a backslash as \\, newline, CR and tab as \n \r \t, any other
 * C0 control or DEL as \xHH, a C1 control (U+0080 to U+009F) as \u00HH, so that no string
 * can start a line or a terminal sequence of its own, and the escaped text can be read back
 * (docs/report-format.md, "A program's strings"). s points at a character (not at the NUL);
 * *n gets its length in bytes (1 for a byte that begins no well-formed UTF-8 sequence). Writes
 * the escape into esc and returns its length, or returns 0 when the character is written as
 * it is. Any thread. */
size_t report_escape_char(const char *s, char esc[8], size_t *n);

/* Writes s (NULL: "") to f as the text report shows a program's string: each character with
 * report_escape_char's escape, every other byte as it is. */
void report_put_escaped(FILE *f, const char *s);

#endif
