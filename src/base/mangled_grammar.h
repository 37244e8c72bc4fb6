/* mangled_grammar.h - the reading state of mangled.c's bound, its small readers, and the parts
 * of the grammar that mangled.c (names, special names, the passes), mangled_type.c (types)
 * and mangled_expr.c (expressions, template arguments) call in each other. Internal to them. */
#ifndef KTIME_MANGLED_GRAMMAR_H
#define KTIME_MANGLED_GRAMMAR_H

#include <stdbool.h>
#include <stdint.h>

/* Bounds saturate here: far past any cap, and a sum of two never overflows. */
#define SAT ((uint64_t)1 << 50)

/* The costs of components, each at least what the demangler prints around their parts:
 * separators, brackets, qualifier words, "{lambda(...)#N}", " [clone ...]". */
#define COMP_COST 32

/* How far a substitution's number may stand from the candidate it names in this reading:
 * demanglers of different versions number a few constructs differently. */
#define SUB_SLACK 1

/* Longer names are not bounded: the work is quadratic in the name's length. */
#define MANGLED_MAX 65536

/* Recursion past this is not followed (a real name nests far less). */
#define MAX_DEPTH 256

/* A substitution candidate: its bound, and the numbers it may have (lo to hi), as some
 * candidates (a closure type by itself) are numbered by some demanglers and not by others. */
struct cand {
    uint64_t size;
    uint32_t lo, hi;
};

/* A template argument: its place in the name (offsets from its start), its number in its
 * list, its bound. */
struct arg {
    uint32_t start, end, index, list;
    bool scope;             /* its list is a function template's (a template parameter's) */
    uint64_t size;
};

/* A template parameter: its place, the argument number it names, the bound it was given. */
struct ref {
    uint32_t at, index;
    uint64_t used;
};

struct mb {
    const char *name, *p, *end;
    struct cand *c;
    uint32_t n, cap;         /* candidates, and room for them (and for args and refs) */
    uint32_t ndef, nopt;     /* those every demangler numbers; those only some do */
    struct arg *args;        /* the template arguments this pass read */
    struct ref *refs;        /* the template parameters this pass read */
    uint32_t nargs, nrefs;
    const struct arg *prev;  /* the arguments the previous pass read (none in the first) */
    uint32_t nprev;
    uint32_t nlists;         /* template argument lists read */
    int64_t name_list;       /* the list that ends the name just read, or -1 */
    uint64_t pack;           /* this pass's bound on the elements of one argument pack */
    uint64_t pack_seen;      /* the largest argument list this pass found */
    bool sr_levels;          /* which reading of an unresolved name (unresolved_name) */
    bool sr_tried;           /* an unresolved name was read the first way */
    uint64_t last_name;      /* the longest name a constructor or destructor may repeat */
    int depth;               /* recursion */
    bool conversion;         /* inside a conversion operator's type */
    bool expression;         /* inside an expression */
    bool bad;                /* not followed: no bound */
};

static inline uint64_t add(uint64_t a, uint64_t b)
{
    return a + b > SAT ? SAT : a + b;
}

static inline uint64_t mul(uint64_t a, uint64_t b)
{
    return b && a > SAT / b ? SAT : a * b;
}

static inline uint64_t max64(uint64_t a, uint64_t b)
{
    return a > b ? a : b;
}

static inline char peek(const struct mb *m)
{
    return m->p < m->end ? *m->p : '\0';
}

static inline char peek2(const struct mb *m)
{
    return m->p + 1 < m->end ? m->p[1] : '\0';
}

static inline bool eat(struct mb *m, char c)
{
    if (peek(m) != c) {
        m->bad = true;
        return false;
    }
    m->p++;
    return true;
}

static inline bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static inline bool is_upper(char c)
{
    return c >= 'A' && c <= 'Z';
}

static inline bool is_lower(char c)
{
    return c >= 'a' && c <= 'z';
}

static inline bool enter(struct mb *m)
{
    if (m->bad || ++m->depth > MAX_DEPTH) {
        m->bad = true;
        return false;
    }
    return true;
}

static inline uint64_t leave(struct mb *m, uint64_t v)
{
    m->depth--;
    return m->bad ? 0 : v;
}

/* Numbers a substitution candidate of bound size (optional: one only some demanglers number). */
void mgl_candidate(struct mb *m, uint64_t size, bool optional);

/* [n] digits: a decimal number's length in bytes (0: none, and bad when required). */
uint64_t mgl_number(struct mb *m, bool required);

/* <non-negative number> _, or _ alone. */
uint64_t mgl_compact_number(struct mb *m);

/* <source-name>: <length> <identifier>; its bound. */
uint64_t mgl_source_name(struct mb *m);

/* The operand count of operator c1 c2, or -1 when it is none. */
int mgl_operator_args(char c1, char c2);

/* <unqualified-name> */
uint64_t mgl_unqualified_name(struct mb *m);

/* T_ or T <n> _: a template argument, bounded by what the previous pass found. */
uint64_t mgl_template_param(struct mb *m);

/* <prefix>s of a nested name, up to (not over) its E. */
uint64_t mgl_prefix(struct mb *m, bool substable);

/* Whether a qualifier follows (see mgl_qualifiers). */
bool mgl_next_is_qualifier(const struct mb *m);

/* The qualifiers of a type or of a member function: r V K, Dx, Do, DO <expr> E, Dw <types> E. */
uint64_t mgl_qualifiers(struct mb *m);

/* Types up to E, '.' or the end (or a function's ref-qualifier before its E). */
uint64_t mgl_parameters(struct mb *m);

/* [J] <type>+: a function's return type (when it has one) and parameters. */
uint64_t mgl_bare_function_type(struct mb *m);

/* <name> */
uint64_t mgl_name(struct mb *m, bool substable);

/* <type> */
uint64_t mgl_type(struct mb *m);

/* <template-arg>: a type, X <expression> E, an <expr-primary>, or a pack I/J ... E. */
uint64_t mgl_template_arg(struct mb *m);

/* <template-args>: I (or J, a pack) <template-arg>* E. Sets name_list to this list. */
uint64_t mgl_template_args(struct mb *m);

/* <expression>, the forms a kernel's name may hold; others are not followed. */
uint64_t mgl_expression(struct mb *m);

/* <encoding>: a name, and a function's types after it; or a special name. */
uint64_t mgl_encoding(struct mb *m);

#endif
