/* jsonin.h - a strict JSON reader (RFC 8259) for ktime's saved reports: the text becomes a
 * tree of values, or one clear error naming where the text went wrong. Strings must be
 * UTF-8; numbers keep their exact integer when they are one. No CUDA; one document per
 * caller, any thread. */
#ifndef KTIME_JSONIN_H
#define KTIME_JSONIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Containers nested deeper than this are refused (a report nests 7 deep). */
#define JSON_MAX_DEPTH 128

enum jv_type { JV_NULL, JV_BOOL, JV_NUMBER, JV_STRING, JV_ARRAY, JV_OBJECT };

struct jv {
    enum jv_type type;
    bool b;                  /* JV_BOOL */
    double num;              /* JV_NUMBER */
    bool is_count;           /* JV_NUMBER written as an integer >= 0 that fits count */
    uint64_t count;
    const char *s;           /* JV_STRING: UTF-8, NUL-terminated (a string holding U+0000 is
                              * refused) */
    size_t len;
    size_t n;                /* JV_ARRAY, JV_OBJECT: members */
    struct jv *items;        /* their values */
    const char **keys;       /* JV_OBJECT: their keys */
};

struct jdoc {
    struct jv root;
    struct jblock *mem;      /* where the tree lives */
    char err[200];           /* why json_parse failed */
    bool truncated;          /* the text ended part way through a value */
};

/* Parses the len bytes at text (which need no NUL) into doc->root. Returns 0, or -1 with
 * doc->err saying what is wrong and where ("line 3, column 7: ..."), and doc->truncated when
 * the text stops part way. Out of memory is an error too. Free doc with json_free either
 * way. */
int json_parse(struct jdoc *doc, const char *text, size_t len);

/* Frees what json_parse allocated. */
void json_free(struct jdoc *doc);

/* Reading only the top level of a document: its members one at a time, a container among
 * them passed over without building its tree (its members counted), so that a report's
 * header costs nothing of its size. The strings of the values read live in doc. */
struct jskim {
    struct jdoc doc;
    const char *p, *start, *end;
    int state;               /* 0: before the object, 1: in it, 2: at its end, -1: failed */
    size_t members;          /* read so far */
    bool pending;            /* the last member is a container not passed over yet */
};

/* Starts reading the len bytes at text (kept by the caller while s is in use). Returns 0,
 * or -1 (s->doc.err says why) when the text does not begin an object. Free s with
 * json_skim_end either way. */
int json_skim_begin(struct jskim *s, const char *text, size_t len);

/* The next member of the top-level object: *key, and *v, read whole for a string, number,
 * boolean or null; for an array or object, its type and n 0 when it is empty, else 1 (its
 * members are not counted), items NULL, and *at its opening bracket: it is passed over by the
 * next call (or json_skim_span), checked only for its brackets and strings. Returns 1 with a
 * member, 0 at the end of the object, -1 when the text is not JSON there or stops part way
 * (s->doc.err, s->doc.truncated). */
int json_skim_next(struct jskim *s, const char **key, struct jv *v, const char **at);

/* Passes over the container json_skim_next just gave: its text, brackets included, is the
 * *len bytes at the *at it gave (for json_parse). Returns 0, or -1 as json_skim_next. */
int json_skim_span(struct jskim *s, size_t *len);

/* Frees what json_skim_begin and json_skim_next allocated. */
void json_skim_end(struct jskim *s);

/* The member `key` of object o (the last one, when a key repeats), or NULL: no such member,
 * or o is not an object. */
const struct jv *jv_get(const struct jv *o, const char *key);

/* The name of a value's type, for messages ("a string", "null", ...). */
const char *jv_type_name(const struct jv *v);

#endif
