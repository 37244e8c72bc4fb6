/* fuzz_json.c - the JSON report (src/report/report.c): json_string alone, and whole reports
 * whose names, command line and numbers come from the input, in JSON and as text.
 *
 * Input: NUL-separated fields. The first is escaped alone; the rest, with a few bytes of
 * numbers between them, fill a report of up to 4 kernels on up to 2 devices, with (as the
 * input says) memory operations, ranges (named from the input, one maybe outside every range),
 * an NVTX capture range of any name, and the L2 flush. Properties:
 * an escaped string is one valid JSON string, UTF-8, that decodes to the input with each
 * byte that begins no well-formed UTF-8 sequence as U+FFFD; a whole report is one valid
 * JSON document (RFC 8259: strings UTF-8, numbers that are numbers); the text report is
 * written without error. (The report has no CSV form.) */
#include "fuzzutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonout.h"
#include "report.h"

/* What json_string must decode to: s with each stray byte as U+FFFD. */
static char *expected(const char *s, size_t *len)
{
    size_t n = strlen(s), o = 0;
    char *e = malloc(3 * n + 1);

    for (size_t i = 0; i < n;) {
        size_t k = fuzz_utf8_seq((const unsigned char *)s + i, n - i);
        if (k) {
            memcpy(e + o, s + i, k), o += k, i += k;
        } else {
            memcpy(e + o, "\xef\xbf\xbd", 3), o += 3, i++;
        }
    }
    e[o] = '\0';
    *len = o;
    return e;
}

static void one_string(const char *s)
{
    char *buf = NULL, *dec, *want;
    size_t len = 0, dlen, wlen, end;
    FILE *f = open_memstream(&buf, &len);

    json_string(f, s);
    fclose(f);
    FUZZ_ASSERT(fuzz_utf8_valid(buf, len), "output is not UTF-8: %s", buf);
    dec = fuzz_json_string(buf, len, &dlen, &end);
    FUZZ_ASSERT(dec && end == len, "not one JSON string: %s", buf);
    want = expected(s, &wlen);
    FUZZ_ASSERT(dlen == wlen && memcmp(dec, want, wlen) == 0, "'%s' decodes to '%s'", buf, dec);
    free(want);
    free(dec);
    free(buf);
}

static const char *const gates[] = { "auto", "on", "off" };
static const char *const timers[] = { "events", "cupti", "both" };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fuzz_in in = { data, size };
    char *first = fuzz_field(&in), *str[32];
    int nstr = 0;
    struct report r;
    struct report_device dev[2];
    struct report_kernel k[4];
    struct stats per[4][2], hw[4][2];
    static struct sketch sk[4], dsk[4][2]; /* 4 KB each */
    const char *argv[3];

    one_string(first);

    memset(&r, 0, sizeof r);
    memset(dev, 0, sizeof dev);
    memset(k, 0, sizeof k);
    memset(per, 0, sizeof per);
    memset(hw, 0, sizeof hw);
    memset(sk, 0, sizeof sk);
    memset(dsk, 0, sizeof dsk);
#define STR() (str[nstr] = fuzz_field(&in), str[nstr++])
    uint8_t shape = fuzz_byte(&in);
    uint8_t extra = fuzz_byte(&in); /* early, so that short inputs reach these parts too */
    r.version = STR();
    r.build = STR();
    r.argc = shape % 4;
    for (int i = 0; i < r.argc; i++)
        argv[i] = STR();
    r.argv = argv;
    r.pid = (long)fuzz_u64(&in);
    r.host = shape & 1 ? STR() : NULL;
    r.rank = shape & 2 ? "0042" : NULL;
    r.world_size = fuzz_byte(&in);
    r.start_unix = (double)fuzz_u64(&in) / 1e6; /* any, up to far past 9999 */
    r.end_unix = fuzz_byte(&in) * 1e7;
    r.warmup = fuzz_byte(&in);
    r.sample = fuzz_byte(&in);
    r.gate = gates[fuzz_byte(&in) % 3];
    r.timer = timers[fuzz_byte(&in) % 3];
    r.timer_requested = timers[fuzz_byte(&in) % 3];
    r.timer_note = shape & 4 ? STR() : NULL;
    r.cupti_library = shape & 8 ? STR() : NULL;
    r.note = shape & 16 ? STR() : NULL;
    r.ndevices = 1 + (shape >> 5 & 1);
    for (int d = 0; d < r.ndevices; d++) {
        char *name = STR(), *drv = STR();
        dev[d].ordinal = d;
        snprintf(dev[d].name, sizeof dev[d].name, "%s", name);
        snprintf(dev[d].driver, sizeof dev[d].driver, "%s", drv);
        dev[d].driver_version = 13000;
        dev[d].floor_events_us = fuzz_byte(&in) / 16.0;
        dev[d].floor_hw_us = fuzz_byte(&in) / 16.0;
    }
    r.devices = dev;
    r.nkernels = shape >> 6;
    for (size_t i = 0; i < r.nkernels; i++) {
        uint8_t how = fuzz_byte(&in);
        k[i].mangled = STR();
        k[i].name = how & 1 ? STR() : NULL;
        k[i].kind = how & 2 ? REPORT_GRAPH : REPORT_KERNEL;
        k[i].calls = fuzz_byte(&in);
        k[i].dropped = fuzz_byte(&in) % 4;
        k[i].unsampled = how & 4 ? fuzz_byte(&in) : 0;
        k[i].per_dev = per[i];
        k[i].hw = how & 8 ? hw[i] : NULL;
        k[i].sk = how & 16 ? &sk[i] : NULL; /* the quantiles and the histogram, or none */
        k[i].dev_sk = how & 32 ? dsk[i] : NULL;
        for (int d = 0; d < r.ndevices; d++)
            for (int s = fuzz_byte(&in) % 8; s > 0; s--) {
                double x = fuzz_byte(&in) * 0.5;
                stats_add(&per[i][d], x);
                sketch_add(&sk[i], x);
                sketch_add(&dsk[i][d], x);
                stats_add(&hw[i][d], fuzz_byte(&in) * 0.25);
            }
    }
    r.kernels = k;
    r.drops[DROP_POOL_EXHAUSTED] = fuzz_byte(&in);

    /* Memory operations, ranges, the capture range, the L2 flush. */
    struct report_kernel mo[2];
    struct stats mper[2][2];
    static struct sketch msk[2];
    struct report_range rg[3];
    struct report_range_row rr[3][3];
    static struct sketch rsk[3][3];
    static char capture_mode[300];
    memset(mo, 0, sizeof mo);
    memset(mper, 0, sizeof mper);
    memset(msk, 0, sizeof msk);
    memset(rg, 0, sizeof rg);
    memset(rr, 0, sizeof rr);
    memset(rsk, 0, sizeof rsk);
    r.memops = extra & 1;
    r.nmemops = r.memops ? (size_t)(extra >> 1 & 3) % 3 : 0;
    for (size_t i = 0; i < r.nmemops; i++) {
        mo[i].mangled = STR();
        mo[i].name = extra & 8 ? STR() : NULL;
        mo[i].kind = REPORT_MEMOP;
        mo[i].calls = fuzz_byte(&in);
        mo[i].captured = fuzz_byte(&in) % 3;
        mo[i].bytes = fuzz_u64(&in);
        mo[i].timed_bytes = fuzz_u64(&in);
        mo[i].per_dev = mper[i];
        mo[i].sk = &msk[i];
        for (int d = 0; d < r.ndevices; d++)
            for (int s = fuzz_byte(&in) % 6; s > 0; s--) {
                double x = fuzz_byte(&in) * 0.75;
                stats_add(&mper[i][d], x);
                sketch_add(&msk[i], x);
            }
    }
    r.memops_rows = mo;
    if (extra & 16) {
        r.range_attribution = extra & 32 ? "outermost" : "innermost";
        r.nvtx = STR();
        r.ranges_unmatched_pops = fuzz_byte(&in);
        r.nranges_by_name = 1 + (size_t)(extra >> 6) % 3;
        for (size_t g = 0; g < r.nranges_by_name; g++) {
            uint8_t how = fuzz_byte(&in);
            rg[g].name = g == 0 && how & 1 ? NULL : STR();
            rg[g].closed = fuzz_byte(&in);
            rg[g].open = how & 2 ? fuzz_byte(&in) % 3 : 0;
            rg[g].wall_ms = fuzz_u64(&in) / 1e3;
            rg[g].nrows = (size_t)(how >> 2) % 4;
            rg[g].rows = rr[g];
            for (size_t j = 0; j < rg[g].nrows; j++) {
                /* A kernel of the table (its name as there), or a name of its own. */
                rr[g][j].mangled = r.nkernels && how & 64 ? k[j % r.nkernels].mangled : STR();
                rr[g][j].name = how & 128 ? STR() : NULL;
                rr[g][j].kind = how & 32 ? REPORT_GRAPH : REPORT_KERNEL;
                rr[g][j].sk = how & 16 ? &rsk[g][j] : NULL;
                for (int s = fuzz_byte(&in) % 6; s > 0; s--) {
                    double x = fuzz_byte(&in) * 1.5;
                    stats_add(&rr[g][j].st, x);
                    sketch_add(&rsk[g][j], x);
                }
                rg[g].total_us += rr[g][j].st.sum;
                rg[g].timed += rr[g][j].st.n;
            }
        }
        r.ranges_by_name = rg;
    }
    if (extra & 4) {
        snprintf(capture_mode, sizeof capture_mode, "nvtx:%s", STR());
        r.capture = capture_mode;
        r.capture_starts = fuzz_byte(&in);
        r.capture_ranges = fuzz_byte(&in);
    }
    r.flush_l2 = extra & 2;
    r.flush_bytes = r.flush_l2 ? fuzz_u64(&in) : 0;
    r.flush_contexts = r.flush_l2 ? fuzz_byte(&in) % 3 : 0;

    char *buf = NULL;
    size_t len = 0, at;
    const char *why;
    FILE *f = open_memstream(&buf, &len);
    FUZZ_ASSERT(report_write_json(f, &r) == 0, "report_write_json failed");
    fclose(f);
    FUZZ_ASSERT(fuzz_json_valid(buf, len, &why, &at), "invalid JSON (%s) at byte %zu: ...%.40s",
                why, at, buf + (at > 20 ? at - 20 : 0));
    free(buf);

    buf = NULL;
    f = open_memstream(&buf, &len);
    FUZZ_ASSERT(report_write_text(f, &r) == 0, "report_write_text failed");
    fclose(f);
    free(buf);

    /* The CSV report: RFC 4180 records, 34 fields each, UTF-8; a header, a record per
     * kernel, and one per GPU for a kernel with samples on both. */
    size_t want = 1 + r.nkernels;
    for (size_t i = 0; i < r.nkernels; i++)
        want += r.ndevices == 2 && per[i][0].n && per[i][1].n ? 2 : 0;
    buf = NULL;
    f = open_memstream(&buf, &len);
    FUZZ_ASSERT(report_write_csv(f, &r) == 0, "report_write_csv failed");
    fclose(f);
    FUZZ_ASSERT(fuzz_utf8_valid(buf, len), "CSV is not UTF-8");
    size_t records = 0;
    int header_fields = 0;
    for (size_t p = 0; p < len;) {
        int fields = 1;
        for (;;) {
            if (p < len && buf[p] == '"') { /* quoted: "" is a quote, ends at a lone " */
                for (p++;; p++) {
                    FUZZ_ASSERT(p < len, "CSV record %zu: unterminated quoted field", records);
                    if (buf[p] == '"' && p + 1 < len && buf[p + 1] == '"')
                        p++;
                    else if (buf[p] == '"')
                        break;
                }
                p++;
            } else {
                while (p < len && buf[p] != ',' && buf[p] != '\r' && buf[p] != '\n') {
                    FUZZ_ASSERT(buf[p] != '"', "CSV record %zu: quote in an unquoted field",
                                records);
                    p++;
                }
            }
            FUZZ_ASSERT(p < len, "CSV record %zu: no CRLF at the end", records);
            if (buf[p] == ',') {
                fields++;
                p++;
                continue;
            }
            FUZZ_ASSERT(buf[p] == '\r' && p + 1 < len && buf[p + 1] == '\n',
                        "CSV record %zu: a bare CR or LF outside quotes", records);
            p += 2;
            break;
        }
        /* Every record as wide as the header, which names every column (fields.h). */
        if (records == 0)
            header_fields = fields;
        FUZZ_ASSERT(fields == header_fields && fields >= 30,
                    "CSV record %zu has %d fields, the header %d", records, fields, header_fields);
        records++;
    }
    FUZZ_ASSERT(records == want, "CSV has %zu records, want %zu", records, want);
    free(buf);

    for (int i = 0; i < nstr; i++)
        free(str[i]);
    free(first);
    return 0;
}
