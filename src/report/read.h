/* read.h - the parts of the JSON report reader (model_read, reader.h) shared by its files:
 * read.c (the document, the header, devices, totals, a merged report's inputs),
 * read_rows.c (the kernels' rows and their parts) and read_sections.c (memory operations,
 * ranges, conditions). Each takes a value of the parsed document (jsonin.h) into the model,
 * or records the first error and returns false. A field that is absent gets the value that
 * `ktime report` has always given it; a field that is present must have its type. */
#ifndef KTIME_READ_H
#define KTIME_READ_H

#include <stdbool.h>
#include <stdint.h>

#include "jsonin.h"
#include "model.h"

struct rd {
    struct model *m;
    char *err;                 /* the first error, for the caller */
    size_t errsz;
    bool failed;
};

/* Records an error: "not a ktime report: WHERE ...". Returns false. */
bool rd_fail(struct rd *r, const char *where, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Records "WHERE.KEY is VALUE, not WANT" for v. Returns false. */
bool rd_bad(struct rd *r, const char *where, const char *key, const struct jv *v,
            const char *want);

/* "WHERE.KEY" or "WHERE[I]" into buf. */
const char *rd_at(char *buf, size_t size, const char *where, const char *key);
const char *rd_index(char *buf, size_t size, const char *where, size_t i);

/* The member key of o, checked to be of type `type` (null allowed when null_ok); absent: NULL,
 * or an error when required. o must be an object (rd_object). */
const struct jv *rd_get(struct rd *r, const struct jv *o, const char *where, const char *key,
                        enum jv_type type, bool null_ok, bool required);

/* The key under which o holds a member: key, else the key's earlier name when o has that one
 * (a report written before the rename), else key. */
const char *rd_key(const struct jv *o, const char *key, const char *earlier);

/* Whether v is an object (else an error naming where). */
bool rd_object(struct rd *r, const struct jv *v, const char *where);

/* A count (an integer >= 0) into *out; absent: dflt, or an error when required. */
bool rd_count(struct rd *r, const struct jv *o, const char *where, const char *key,
              bool required, uint64_t dflt, uint64_t *out);

/* A count of at most max into *out; absent: 0, or an error when required. */
bool rd_count_to(struct rd *r, const struct jv *o, const char *where, const char *key,
                 bool required, uint64_t max, uint64_t *out);

/* A count or null into *out (null: -1); absent: -1. */
bool rd_long(struct rd *r, const struct jv *o, const char *where, const char *key, long *out);

/* A number into *out; null (when null_ok) or absent: *has false and *out dflt; absent and
 * required: an error. has may be NULL. */
bool rd_num(struct rd *r, const struct jv *o, const char *where, const char *key, bool required,
            bool null_ok, double dflt, double *out, bool *has);

/* A boolean; absent or null: dflt. */
bool rd_bool(struct rd *r, const struct jv *o, const char *where, const char *key, bool dflt,
             bool *out);

/* A string copied into the model, or NULL for null; absent: dflt (copied), or an error when
 * required. */
bool rd_str(struct rd *r, const struct jv *o, const char *where, const char *key, bool required,
            const char *dflt, const char **out);

/* A name as the program had it: the bytes of KEY_bytes (hex) when there is one, else KEY's
 * string (see rd_str). */
bool rd_raw(struct rd *r, const struct jv *o, const char *where, const char *key, bool required,
            const char *dflt, const char **out);

/* A list of strings (names as they were: a parallel list of hex bytes, bytes_key, wins). */
bool rd_strings(struct rd *r, const struct jv *o, const char *where, const char *key,
                const char *bytes_key, const char ***out, size_t *n);

/* The block of statistics at o (a row, a GPU's part, a shape's, a range's row): timed, the
 * statistics, quantiles (null: none) and histogram. whole_ms > 0: a percent that is absent
 * is the block's sum over it. */
bool rd_stats(struct rd *r, const struct jv *o, const char *where, struct rm_stats *s,
              double whole_ms);

/* "histogram": {...} (absent or null: none). */
bool rd_hist(struct rd *r, const struct jv *o, const char *where, struct rm_hist **out);

/* The kernels' rows (read_rows.c). */
bool rd_rows(struct rd *r, const struct jv *root);

/* The sections (read_sections.c). */
bool rd_memops(struct rd *r, const struct jv *root);
bool rd_ranges(struct rd *r, const struct jv *root);
bool rd_conditions(struct rd *r, const struct jv *root);

/* A row's launch calls and queue times; the GPUs' busy time; communication (read_busy.c). */
bool rd_launch(struct rd *r, const struct jv *k, const char *where, struct rm_row *w);
bool rd_busy(struct rd *r, const struct jv *root);
bool rd_comm(struct rd *r, const struct jv *root);

#endif
