/* names.h - a kernel's name shortened for the text table's Kernel column. */
#ifndef KTIME_NAMES_H
#define KTIME_NAMES_H

#include <stddef.h>

/* Shortens a demangled kernel name for a table column: drops the "void " return type
 * and the parameter list, then elides the middle of what is longer than width (at least 8),
 * between UTF-8 characters: the result is then width bytes, or up to 6 fewer.
 * Writes into out (size outsz). Returns 0 when out equals full, 1 when only the return
 * type or parameters were dropped, 2 when the middle was elided. Any thread. */
int report_short_name(const char *full, char *out, size_t outsz, size_t width);

#endif
