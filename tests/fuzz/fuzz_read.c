/* fuzz_read.c - the JSON report reader (src/report/read*.c, src/base/jsonin.c) and the
 * writers on what it reads.
 *
 * Input: any bytes, taken as a saved JSON report. Properties: model_read returns 0 or -1,
 * and on -1 one line saying why; it accepts nothing that is not one JSON value (checked by
 * fuzzutil.c's reader, written apart from ktime's); what it accepts writes as JSON that is
 * valid, reads back, and writes again the same bytes (the writers print the model whole), and
 * as text and CSV (UTF-8, CRLF lines) without error. */
#include "fuzzutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reader.h"

static char *written(const struct model *m, int (*writer)(FILE *, const struct model *),
                     size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);

    FUZZ_ASSERT(f, "open_memstream failed");
    FUZZ_ASSERT(writer(f, m) == 0, "a writer failed");
    fclose(f);
    return buf;
}

static void check_csv(const char *csv, size_t len)
{
    FUZZ_ASSERT(fuzz_utf8_valid(csv, len), "the CSV is not UTF-8");
    FUZZ_ASSERT(len >= 2 && csv[len - 2] == '\r' && csv[len - 1] == '\n',
                "the CSV does not end in CRLF");
}

/* What an accepted report writes, and that its JSON is a fixed point. */
static void accepted(struct model *m)
{
    struct model back;
    char err[400], *json, *again, *text, *csv;
    size_t jlen, alen, tlen, clen, at = 0;
    const char *why = "";

    json = written(m, model_write_json, &jlen);
    FUZZ_ASSERT(fuzz_json_valid(json, jlen, &why, &at), "the JSON written is not valid (%s at %zu)",
                why, at);
    FUZZ_ASSERT(model_read(&back, json, jlen, err, sizeof err) == 0,
                "the JSON written does not read back: %s", err);
    again = written(&back, model_write_json, &alen);
    FUZZ_ASSERT(alen == jlen && memcmp(json, again, jlen) == 0,
                "the JSON read back writes differently");
    text = written(m, model_write_text, &tlen);
    csv = written(m, model_write_csv, &clen);
    check_csv(csv, clen);
    free(json);
    free(again);
    free(text);
    free(csv);
    model_free(&back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct model m;
    char err[400];
    const char *why = "";
    size_t at = 0;

    memset(err, 'x', sizeof err);
    if (model_read(&m, (const char *)data, size, err, sizeof err) != 0) {
        FUZZ_ASSERT(memchr(err, '\0', sizeof err) && err[0], "no message");
        FUZZ_ASSERT(!strchr(err, '\n'), "the message is not one line: %s", err);
        FUZZ_ASSERT(m.mem == NULL, "the model was not freed");
        return 0;
    }
    FUZZ_ASSERT(fuzz_json_valid((const char *)data, size, &why, &at),
                "accepted what is not JSON (%s at %zu)", why, at);
    accepted(&m);
    model_free(&m);
    return 0;
}
