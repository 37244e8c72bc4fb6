/* test_jsonin.c - the JSON reader (src/base/jsonin.c): numbers read to the same double
 * strtod gives (correctly rounded), whatever their form; counts exact; nested containers;
 * the skim of a document's top-level members. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonin.h"

static uint64_t rng = 0x9E3779B97F4A7C15ULL;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* The number text s, read as a document of its own, against strtod (bit for bit). */
static void same_as_strtod(const char *s)
{
    struct jdoc d;
    double want = strtod(s, NULL);

    if (!isfinite(want))
        return; /* refused, as a number too large for a double */
    if (json_parse(&d, s, strlen(s)) != 0)
        fail_msg("'%s': %s", s, d.err);
    if (d.root.type != JV_NUMBER || memcmp(&d.root.num, &want, sizeof want) != 0)
        fail_msg("'%s': read %.17g, strtod %.17g", s, d.root.num, want);
    json_free(&d);
}

/* Doubles of every magnitude a report holds and beyond, as the library prints them (%.17g)
 * and shorter; decimal strings of up to 19 significant digits; the halfway points between
 * neighbouring doubles (the hard cases of rounding). */
static void test_numbers_as_strtod(void **state)
{
    static const char *const fixed[] = {
        "0", "-0", "1", "-1", "0.5", "125", "4375", "0.050000000000000003", "1.02",
        "124.74922328463848", "2630.0000101327896", "623.99973964693868", "1e-5", "1e-21",
        "1e-22", "1.7976931348623157e308", "2.2250738585072014e-308", "4.9e-324", "1e19",
        "1e20", "18446744073709551615", "18446744073709551616", "9007199254740993",
        "9007199254740992.5", "0.1", "0.3", "123456789012345678901234567890",
        "1.00000000000000011102230246251565404236316680908203125",
        "1.0000000000000001110223024625156540423631668090820312", "1E+2", "2.5E-3",
        "0.00000000000000000000000000000000001", "100000000000000000000000",
    };
    char buf[64];

    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        same_as_strtod(fixed[i]);
    for (int i = 0; i < 300000; i++) {
        uint64_t bits = next();
        double x;
        /* A random double, or one of report-like size (1e-6 to 1e9). */
        if (i % 2) {
            memcpy(&x, &bits, sizeof x);
            if (!isfinite(x))
                continue;
        } else {
            x = ldexp((double)(bits >> 11), -53) * pow(10, (double)(next() % 16) - 6);
        }
        snprintf(buf, sizeof buf, "%.17g", x);
        same_as_strtod(buf);
        snprintf(buf, sizeof buf, "%.*g", 1 + (int)(next() % 19), x);
        same_as_strtod(buf);
        snprintf(buf, sizeof buf, "%.*e", (int)(next() % 20), x);
        same_as_strtod(buf);
    }
    for (int i = 0; i < 200000; i++) {
        /* Halfway between two neighbouring doubles, written out exactly (%.40g is exact
         * enough here: a halfway point has at most 53 + 1 significant bits). */
        double x = ldexp((double)(next() >> 11), -53) * pow(10, (double)(next() % 12) - 4);
        double y = nextafter(x, INFINITY);
        long double mid = ((long double)x + (long double)y) / 2;
        snprintf(buf, sizeof buf, "%.25Lg", mid);
        same_as_strtod(buf);
        /* Decimal strings of up to 19 digits and a small exponent. */
        snprintf(buf, sizeof buf, "%llue%d", (unsigned long long)(next() % 10000000000000000000ULL),
                 (int)(next() % 44) - 23);
        same_as_strtod(buf);
    }
}

static void test_counts(void **state)
{
    static const struct { const char *s; bool count; uint64_t v; } cases[] = {
        { "0", true, 0 }, { "7", true, 7 }, { "18446744073709551615", true, UINT64_MAX },
        { "18446744073709551616", false, 0 }, { "-3", false, 0 }, { "3.0", false, 0 },
        { "3e0", false, 0 }, { "9999999999999999999", true, 9999999999999999999ULL },
        { "10000000000000000000", true, 10000000000000000000ULL },
    };
    struct jdoc d;

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        assert_int_equal(json_parse(&d, cases[i].s, strlen(cases[i].s)), 0);
        assert_int_equal(d.root.type, JV_NUMBER);
        if (d.root.is_count != cases[i].count)
            fail_msg("'%s': is_count %d", cases[i].s, d.root.is_count);
        if (cases[i].count)
            assert_true(d.root.count == cases[i].v);
        json_free(&d);
    }
}

/* Containers inside containers keep their members, in order, whatever the nesting. */
static void test_nesting(void **state)
{
    const char *s = "{\"a\": [1, [2, {\"b\": [3, 4], \"c\": {}}], []], \"d\": {\"e\": [5]}, "
                    "\"f\": \"g\"}";
    struct jdoc d;

    assert_int_equal(json_parse(&d, s, strlen(s)), 0);
    const struct jv *a = jv_get(&d.root, "a");
    assert_non_null(a);
    assert_int_equal(a->n, 3);
    assert_true(a->items[0].num == 1);
    assert_int_equal(a->items[1].n, 2);
    assert_true(a->items[1].items[0].num == 2);
    const struct jv *b = jv_get(&a->items[1].items[1], "b");
    assert_int_equal(b->n, 2);
    assert_true(b->items[1].num == 4);
    assert_int_equal(jv_get(&a->items[1].items[1], "c")->type, JV_OBJECT);
    assert_int_equal(a->items[2].n, 0);
    assert_true(jv_get(jv_get(&d.root, "d"), "e")->items[0].num == 5);
    assert_string_equal(jv_get(&d.root, "f")->s, "g");
    json_free(&d);
    /* An array of a thousand objects (the stack of members grows under the tree). */
    size_t cap = 40000, n = 0;
    char *big = malloc(cap);
    n += (size_t)snprintf(big + n, cap - n, "[");
    for (int i = 0; i < 1000; i++)
        n += (size_t)snprintf(big + n, cap - n, "%s{\"i\": %d, \"l\": [%d, %d]}", i ? "," : "", i,
                              i, -i);
    n += (size_t)snprintf(big + n, cap - n, "]");
    assert_int_equal(json_parse(&d, big, n), 0);
    assert_int_equal(d.root.n, 1000);
    for (int i = 0; i < 1000; i++) {
        assert_true(jv_get(&d.root.items[i], "i")->num == i);
        assert_true(jv_get(&d.root.items[i], "l")->items[1].num == -i);
    }
    json_free(&d);
    free(big);
}

/* The top level member by member: scalars read, containers passed over (their text on
 * request), empty ones told apart. */
static void test_skim(void **state)
{
    const char *s = " {\"a\": 1.5, \"b\": \"x\\\"]\", \"c\": [1, [2, 3], {\"d\": \"]\"}], "
                    "\"e\": [], \"f\": {\"g\": null}, \"h\": true} ";
    struct jskim k;
    const char *key, *at;
    size_t len;
    struct jv v;

    assert_int_equal(json_skim_begin(&k, s, strlen(s)), 0);
    assert_int_equal(json_skim_next(&k, &key, &v, &at), 1);
    assert_string_equal(key, "a");
    assert_true(v.type == JV_NUMBER && v.num == 1.5);
    assert_int_equal(json_skim_next(&k, &key, &v, &at), 1);
    assert_string_equal(key, "b");
    assert_string_equal(v.s, "x\"]");
    assert_int_equal(json_skim_next(&k, &key, &v, &at), 1);
    assert_string_equal(key, "c");
    assert_true(v.type == JV_ARRAY && v.n == 1 && !v.items);
    assert_int_equal(json_skim_span(&k, &len), 0);
    assert_int_equal(len, strlen("[1, [2, 3], {\"d\": \"]\"}]"));
    assert_memory_equal(at, "[1, [2", 6);
    assert_int_equal(json_skim_next(&k, &key, &v, &at), 1);
    assert_true(strcmp(key, "e") == 0 && v.type == JV_ARRAY && v.n == 0);
    assert_int_equal(json_skim_next(&k, &key, &v, &at), 1);
    assert_true(strcmp(key, "f") == 0 && v.type == JV_OBJECT && v.n == 1);
    assert_int_equal(json_skim_next(&k, &key, &v, &at), 1);
    assert_true(strcmp(key, "h") == 0 && v.type == JV_BOOL && v.b);
    assert_int_equal(json_skim_next(&k, &key, &v, &at), 0);
    assert_int_equal(json_skim_next(&k, &key, &v, &at), 0);
    json_skim_end(&k);
    /* Cut short inside a container passed over: truncated. */
    assert_int_equal(json_skim_begin(&k, s, 40), 0);
    int rc;
    while ((rc = json_skim_next(&k, &key, &v, &at)) == 1)
        ;
    assert_int_equal(rc, -1);
    assert_true(k.doc.truncated);
    json_skim_end(&k);
    /* Not an object; a member without its colon. */
    assert_int_equal(json_skim_begin(&k, "[1]", 3), -1);
    json_skim_end(&k);
    assert_int_equal(json_skim_begin(&k, "{\"a\" 1}", 7), 0);
    assert_int_equal(json_skim_next(&k, &key, &v, &at), -1);
    assert_non_null(strstr(k.doc.err, "no ':'"));
    json_skim_end(&k);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_numbers_as_strtod),
        cmocka_unit_test(test_counts),
        cmocka_unit_test(test_nesting),
        cmocka_unit_test(test_skim),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
