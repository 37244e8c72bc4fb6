/* report.c - the report of a run written in a format: its model built, then written; and
 * the rows it gathered freed. */
#include "ac_config.h" /* autoconf: _GNU_SOURCE */
#include "report.h"

#include <stdlib.h>
#include <string.h>

#include "log.h"

static int write_as(FILE *f, struct report *r, int (*writer)(FILE *, const struct model *))
{
    struct model m;
    int rc;

    if (model_build(&m, r) != 0)
        return -1;
    rc = writer(f, &m);
    model_free(&m);
    return rc;
}

int report_write_text(FILE *f, struct report *r)
{
    return write_as(f, r, model_write_text);
}

int report_write_json(FILE *f, struct report *r)
{
    return write_as(f, r, model_write_json);
}

int report_write_csv(FILE *f, struct report *r)
{
    return write_as(f, r, model_write_csv);
}

bool report_is_empty(const char *buf, size_t n)
{
    static const char csv_head[] = "name,mangled,kind,device,";
    static const char *const notes[] = { "\nnote     " REPORT_EMPTY_NOTE "\n",
                                         "\n  \"note\": \"" REPORT_EMPTY_NOTE "\"" };

    if (n == 0)
        return true;
    if (n > strlen(csv_head) && memcmp(buf, csv_head, strlen(csv_head)) == 0)
        return memchr(buf, '\n', n) == buf + n - 1; /* the header row, and nothing after it */
    if (n < 6 || (memcmp(buf, "ktime ", 6) != 0 && memcmp(buf, "{\n", 2) != 0))
        return false;
    for (size_t i = 0; i < sizeof notes / sizeof notes[0]; i++)
        if (memmem(buf, n, notes[i], strlen(notes[i])))
            return true;
    return false;
}

void report_rows_free(struct report_kernel *rows, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(rows[i].per_dev);
        free(rows[i].hw);
        free(rows[i].sk);
        free(rows[i].dev_sk);
        shape_set_free(rows[i].shapes);
        free((char *)rows[i].name);
    }
}

int report_device_index(const struct report *r, int ordinal)
{
    for (int i = 0; i < r->ndevices; i++)
        if (r->devices[i].ordinal == ordinal)
            return i;
    return -1;
}

void report_row_add_sketch(const struct report *r, struct report_kernel *rk, int d,
                           const struct sketch *s)
{
    if (!rk->sk && !(rk->sk = calloc(1, sizeof *rk->sk)))
        return;
    sketch_merge(rk->sk, s);
    if (!rk->dev_sk &&
        !(rk->dev_sk = calloc((size_t)(r->ndevices ? r->ndevices : 1), sizeof *rk->dev_sk)))
        return;
    sketch_merge(&rk->dev_sk[d], s);
}

void report_shapes_short(void)
{
    static bool said;

    if (!said)
        log_warn("out of memory: the launch shapes of some kernels miss samples (their rows "
                 "and totals are whole)");
    said = true;
}
