/* test_trace.c - the trace's store and writer: bounded (past max, counted as dropped), across
 * chunk boundaries, written as Trace Event Format JSON with times from the earliest event. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace.h"

/* Occurrences of needle in hay, in one pass (strstr from each match would measure the rest of
 * a 30 MB string every time under AddressSanitizer's interceptor: quadratic). */
static int count(const char *hay, const char *needle)
{
    size_t k = strlen(needle);
    int n = 0;
    for (const char *p = hay; *p; p++)
        if (*p == *needle && strncmp(p, needle, k) == 0)
            n++, p += k - 1;
    return n;
}

static char *render(const struct trace *t, const char *(*names)(uint32_t))
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_int_equal(trace_write(f, t, names, "9.9.9"), 0);
    fclose(f);
    return buf;
}

static const char *by_id(uint32_t id)
{
    return id == 7 ? "_Z6kernelPf" : NULL;
}

static void test_bounded(void **state)
{
    struct trace t;
    struct kshape sh = { { 8, 1, 1 }, { 256, 1, 1 }, 0 };
    trace_init(&t, 5);
    for (int i = 0; i < 9; i++)
        trace_add(&t, 1000u * (uint64_t)i, 500, "k", 0, 0, 1, &sh);
    assert_int_equal(t.n, 5);
    assert_int_equal(t.dropped, 4);
    char *j = render(&t, NULL);
    assert_int_equal(count(j, "\"ph\": \"X\""), 5);
    assert_non_null(strstr(j, "\"dropped\": 4"));
    free(j);
    trace_free(&t);
}

/* More events than one chunk holds: all kept, in order. */
static void test_chunks(void **state)
{
    struct trace t;
    uint64_t n = 3 * 65536 + 17;
    trace_init(&t, n);
    for (uint64_t i = 0; i < n; i++)
        trace_add(&t, 5000 + i, 1, NULL, 7, (int)(i % 2), 1, NULL);
    assert_int_equal(t.n, n);
    assert_int_equal(t.dropped, 0);
    char *j = render(&t, by_id);
    assert_int_equal(count(j, "\"ph\": \"X\""), (int)n);
    assert_int_equal(count(j, "\"name\": \"process_name\""), 2); /* a process per GPU, once */
    assert_int_equal(count(j, "\"name\": \"thread_name\""), 2);  /* a track per GPU and stream */
    /* Times from the earliest event, in microseconds; names demangled where a demangler is. */
    assert_non_null(strstr(j, "\"ts\": 0.000, \"dur\": 0.001"));
    assert_non_null(strstr(j, "\"mangled\": \"_Z6kernelPf\""));
    free(j);
    trace_free(&t);
}

/* A slice's name and arguments are JSON strings, escaped; the shape when there is one. */
static void test_json(void **state)
{
    struct trace t;
    struct kshape sh = { { 2, 3, 4 }, { 32, 2, 1 }, 1024 };
    trace_init(&t, 10);
    trace_add(&t, 2000000, 1500, "we\"ird\\name", 0, 1, 99, &sh);
    trace_add(&t, 1000000, 250, "plain", 0, 1, 99, NULL);
    char *j = render(&t, NULL);
    assert_non_null(strstr(j, "\"name\": \"we\\\"ird\\\\name\""));
    assert_non_null(strstr(j, "\"ts\": 1000.000, \"dur\": 1.500, \"pid\": 1, \"tid\": 1, \"args\": "
                              "{\"grid\": \"2x3x4\", \"block\": \"32x2x1\", \"shared_bytes\": 1024, "));
    assert_non_null(strstr(j, "\"ts\": 0.000, \"dur\": 0.250, \"pid\": 1, \"tid\": 1, \"args\": "
                              "{\"mangled\": \"plain\"}"));
    assert_non_null(strstr(j, "{\"name\": \"GPU 1\"}"));
    free(j);
    /* An empty trace is a valid one. */
    struct trace e;
    trace_init(&e, 10);
    j = render(&e, NULL);
    assert_non_null(strstr(j, "\"traceEvents\": []}"));
    free(j);
    trace_free(&t);
    trace_free(&e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bounded),
        cmocka_unit_test(test_chunks),
        cmocka_unit_test(test_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
