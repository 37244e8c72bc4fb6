/* reader.h - a saved JSON report back into the report model (model.h), and the views of it
 * that `ktime report` offers: the rows sorted another way, filtered, the first N. For
 * ktime-render; not in libktime. */
#ifndef KTIME_READER_H
#define KTIME_READER_H

#include <regex.h>
#include <stddef.h>

#include "model.h"

/* The newest schema_version model_read reads (it reads every one from 1). */
#define REPORT_SCHEMA_MAX 2

/* Reads the JSON report in the len bytes at text (a run's report, or one `ktime merge`
 * made) into m, as model_build would have built it, with its name column. Returns 0, or -1
 * with err (errsz bytes) saying why in one line, m then empty: the text is not JSON ("not
 * valid JSON (line 3, column 7: ...)", or "truncated (...)"), or not a ktime report ("not a
 * ktime report: kernels[0].timed is 'many', not a count"), or memory ran out. Any thread. */
int model_read(struct model *m, const char *text, size_t len, char *err, size_t errsz);

/* model_read without the name column (the rows' short names): for a merge, which reads the
 * data only. */
int model_read_data(struct model *m, const char *text, size_t len, char *err, size_t errsz);

/* How model_select orders the rows. */
enum model_sort { SORT_TOTAL, SORT_MEAN, SORT_P99, SORT_CALLS };

/* Keeps the rows whose name or mangled name filter matches (NULL: all; `filter_text` is its
 * pattern, for the line), ordered by `sort` (SORT_TOTAL: as they are; else largest first, rows
 * with no value last, ties in their order), the first `top` of them (0: all), then the name
 * column anew. When any of these changes what is shown, m->shown says so ("shown    2 of 3
 * kernels (...); the totals below are the whole run's"). Returns 0, or -1 when out of memory
 * (m unchanged). */
int model_select(struct model *m, const regex_t *filter, const char *filter_text,
                 enum model_sort sort, size_t top);

#endif
