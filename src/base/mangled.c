/* mangled.c - an upper bound on the length of a C++ symbol's demangled form (mangled.h). */
#include "ac_config.h" /* autoconf: _GNU_SOURCE, PACKAGE_VERSION */
#include "mangled.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

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

static uint64_t add(uint64_t a, uint64_t b)
{
    return a + b > SAT ? SAT : a + b;
}

static uint64_t mul(uint64_t a, uint64_t b)
{
    return b && a > SAT / b ? SAT : a * b;
}

static uint64_t max64(uint64_t a, uint64_t b)
{
    return a > b ? a : b;
}

static char peek(const struct mb *m)
{
    return m->p < m->end ? *m->p : '\0';
}

static char peek2(const struct mb *m)
{
    return m->p + 1 < m->end ? m->p[1] : '\0';
}

static bool eat(struct mb *m, char c)
{
    if (peek(m) != c) {
        m->bad = true;
        return false;
    }
    m->p++;
    return true;
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static bool is_upper(char c)
{
    return c >= 'A' && c <= 'Z';
}

static bool is_lower(char c)
{
    return c >= 'a' && c <= 'z';
}

static bool enter(struct mb *m)
{
    if (m->bad || ++m->depth > MAX_DEPTH) {
        m->bad = true;
        return false;
    }
    return true;
}

static uint64_t leave(struct mb *m, uint64_t v)
{
    m->depth--;
    return m->bad ? 0 : v;
}

static void candidate(struct mb *m, uint64_t size, bool optional)
{
    if (m->bad || m->n == m->cap) {
        m->bad = true;
        return;
    }
    m->c[m->n++] = (struct cand){ size, m->ndef, m->ndef + m->nopt };
    if (optional)
        m->nopt++;
    else
        m->ndef++;
}

/* The bound of what substitution number id names: the largest candidate that may have that
 * number (give or take SUB_SLACK). */
static uint64_t candidate_size(struct mb *m, uint64_t id)
{
    uint64_t best = 0;
    bool found = false;

    for (uint32_t i = 0; i < m->n; i++)
        if (id + SUB_SLACK >= m->c[i].lo && id <= (uint64_t)m->c[i].hi + SUB_SLACK) {
            best = max64(best, m->c[i].size);
            found = true;
        }
    if (!found)
        m->bad = true;
    return best;
}

/* [n] digits: a decimal number's length in bytes (0: none, and bad when required). */
static uint64_t number(struct mb *m, bool required)
{
    const char *s = m->p;

    if (peek(m) == 'n')
        m->p++;
    while (is_digit(peek(m)))
        m->p++;
    if (required && (m->p == s || !is_digit(m->p[-1])))
        m->bad = true;
    return (uint64_t)(m->p - s);
}

/* <non-negative number> _, or _ alone. */
static uint64_t compact_number(struct mb *m)
{
    uint64_t n = 0;

    if (peek(m) == 'n') {
        m->bad = true;
        return 0;
    }
    if (peek(m) != '_')
        n = number(m, true);
    eat(m, '_');
    return n;
}

static uint64_t source_name(struct mb *m)
{
    uint64_t len = 0;

    if (!is_digit(peek(m))) {
        m->bad = true;
        return 0;
    }
    while (is_digit(peek(m)) && len < SAT)
        len = len * 10 + (uint64_t)(*m->p++ - '0');
    if (len == 0 || len > (uint64_t)(m->end - m->p)) {
        m->bad = true;
        return 0;
    }
    m->p += len;
    m->last_name = max64(m->last_name, len);
    /* "(anonymous namespace)" replaces _GLOBAL__N_1 and the like */
    return max64(len, 21);
}

static void discriminator(struct mb *m)
{
    if (peek(m) != '_')
        return;
    m->p++;
    if (peek(m) == '_') {
        m->p++;
        number(m, true);
        if (peek(m) == '_')
            m->p++;
    } else {
        number(m, true);
    }
}

static uint64_t abi_tags(struct mb *m, uint64_t s)
{
    while (!m->bad && peek(m) == 'B') {
        m->p++;
        s = add(s, add(source_name(m), COMP_COST));
    }
    return s;
}

static uint64_t type(struct mb *m);
static uint64_t name(struct mb *m, bool substable);
static uint64_t encoding(struct mb *m);
static uint64_t template_args(struct mb *m);
static uint64_t expression(struct mb *m);
static uint64_t unqualified_name(struct mb *m);
static uint64_t parameters(struct mb *m);
static uint64_t prefix(struct mb *m, bool substable);
static uint64_t unresolved_name(struct mb *m);
static uint64_t special_name(struct mb *m);
static uint64_t template_arg(struct mb *m);
static uint64_t expr_primary(struct mb *m);

/* The two-letter operators and their operand counts, as the ABI lists them. */
static const char operators[] =
    "aN2aS2aa2ad1an2at1aw1az1cc2cl2cm2co1dV2dX3da1dc2de1di2dl1ds2dt2dv2dx2eO2eo2eq2fL3fR3fl2"
    "fr2ge2gs1gt2ix2lS2le2li1ls2lt2mI2mL2mi2ml2mm1na3ne2ng1nt1nw3nx1oR2oo2or2pL2pl2pm2pp1ps1"
    "pt2qu3rM2rS2rc2rm2rs2sP1sZ1sc2ss2st1sz1tr0tw1";

/* The operand count of operator c1 c2, or -1 when it is none. */
static int operator_args(char c1, char c2)
{
    for (const char *o = operators; *o; o += 3)
        if (o[0] == c1 && o[1] == c2)
            return o[2] - '0';
    return -1;
}

/* <operator-name>, in a name (not an expression). */
static uint64_t operator_name(struct mb *m)
{
    char c1 = peek(m), c2 = peek2(m);
    uint64_t s = COMP_COST;

    if (c1 == '\0' || c2 == '\0') {
        m->bad = true;
        return 0;
    }
    m->p += 2;
    if (c1 == 'v' && is_digit(c2))
        return add(s, source_name(m));
    if (c1 == 'c' && c2 == 'v') {
        bool was = m->conversion;
        m->conversion = !m->expression;
        s = add(s, type(m));
        m->conversion = was;
        return s;
    }
    if (operator_args(c1, c2) < 0) {
        m->bad = true;
        return 0;
    }
    if (c1 == 'l' && c2 == 'i')
        s = add(s, source_name(m));
    return s;
}

/* A closure type: Ul [<template-head>] <lambda-sig> E [<number>] _ */
static uint64_t lambda(struct mb *m)
{
    uint64_t s = COMP_COST;

    m->p += 2;
    /* The template head: Ty, Tn <type>, Tt <head> E, Tp <parm>. */
    while (!m->bad && peek(m) == 'T' && strchr("yntp", peek2(m)) && peek2(m)) {
        while (peek(m) == 'T' && peek2(m) == 'p')
            m->p += 2;
        if (peek(m) != 'T') {
            m->bad = true;
            break;
        }
        char k = peek2(m);
        m->p += 2;
        s = add(s, COMP_COST);
        if (k == 'n')
            s = add(s, type(m));
        else if (k == 't') {
            /* a template template parameter's own head, up to its E */
            while (!m->bad && peek(m) == 'T' && strchr("yntp", peek2(m)) && peek2(m)) {
                m->p += 2;
                s = add(s, COMP_COST);
                if (m->p[-1] == 'n')
                    s = add(s, type(m));
                else if (m->p[-1] == 't')
                    m->bad = true; /* deeper heads: not followed */
            }
            eat(m, 'E');
        } else if (k != 'y') {
            m->bad = true;
        }
    }
    s = add(s, parameters(m));
    eat(m, 'E');
    s = add(s, compact_number(m));
    return s;
}

/* <unqualified-name> */
static uint64_t unqualified_name(struct mb *m)
{
    char c = peek(m);
    uint64_t s = 0;

    if (!enter(m))
        return 0;
    if (c == 'F') { /* a friend declared in a class */
        m->p++;
        s = COMP_COST;
        c = peek(m);
    }
    if (is_digit(c)) {
        s = add(s, source_name(m));
    } else if (is_lower(c)) {
        if (c == 'o' && peek2(m) == 'n') {
            bool was = m->expression;
            m->p += 2;
            m->expression = false;
            s = add(s, operator_name(m));
            m->expression = was;
        } else {
            s = add(s, operator_name(m));
        }
    } else if (c == 'D' && peek2(m) == 'C') { /* a structured binding: [a, b] */
        m->p += 2;
        do
            s = add(s, add(source_name(m), 2));
        while (!m->bad && peek(m) != 'E');
        eat(m, 'E');
        s = add(s, COMP_COST);
    } else if (c == 'C' || c == 'D') {
        /* A constructor or destructor prints its class's name again. */
        bool ctor = c == 'C', inheriting = ctor && peek2(m) == 'I';
        if (inheriting)
            m->p++;
        c = peek2(m);
        if (ctor ? c < '1' || c > '5' : c < '0' || c > '5' || c == '3') {
            m->bad = true;
            return leave(m, 0);
        }
        m->p += 2;
        s = add(s, add(max64(m->last_name, 72), 2));
        if (inheriting)
            s = add(s, type(m));
    } else if (c == 'L') { /* internal linkage */
        m->p++;
        s = add(s, source_name(m));
        discriminator(m);
    } else if (c == 'U' && peek2(m) == 'l') {
        uint64_t l = lambda(m);
        s = add(s, l);
        /* Numbered as a candidate by itself in older demanglers, not in newer ones. */
        candidate(m, l, true);
    } else if (c == 'U' && peek2(m) == 't') {
        m->p += 2;
        s = add(s, add(compact_number(m), COMP_COST));
        candidate(m, s, false);
    } else {
        m->bad = true; /* module names (W) and the rest: not followed */
    }
    s = abi_tags(m, s);
    return leave(m, s);
}

/* <substitution>: S_, S <seq-id> _, or a standard abbreviation. prefix: in a nested name. */
static uint64_t substitution(struct mb *m)
{
    char c;

    m->p++; /* S */
    c = peek(m);
    if (c == '_' || is_digit(c) || is_upper(c)) {
        uint64_t id = 0;
        if (c != '_') {
            while (is_digit(peek(m)) || is_upper(peek(m))) {
                c = *m->p++;
                id = id * 36 + (uint64_t)(is_digit(c) ? c - '0' : c - 'A' + 10);
                if (id > SAT) {
                    m->bad = true;
                    return 0;
                }
            }
            id++;
        }
        eat(m, '_');
        return m->bad ? 0 : candidate_size(m, id);
    }
    if (!c || !strchr("tabsiod", c)) {
        m->bad = true;
        return 0;
    }
    m->p++;
    /* "std::basic_string<char, std::char_traits<char>, std::allocator<char> >" at most, and
     * a constructor after it repeats "basic_string" or the like. */
    m->last_name = max64(m->last_name, 14);
    if (peek(m) == 'B') {
        uint64_t s = abi_tags(m, 72);
        candidate(m, s, false);
        return s;
    }
    return 72;
}

/* The largest template argument numbered index that a template parameter at offset at may
 * print. The demangler prints a parameter as an argument of the function template whose
 * name and type it is printing: an argument of any function template's list of this name
 * (whichever is printing is the demangler's affair), but not one that holds the parameter
 * itself (printing an argument inside itself is a loop the demangler refuses). */
static uint64_t arg_bound(const struct arg *args, uint32_t n, uint32_t index, uint32_t at)
{
    uint64_t b = COMP_COST;

    for (uint32_t i = 0; i < n; i++)
        if (args[i].scope && args[i].index == index && (args[i].end <= at || args[i].start > at))
            b = max64(b, args[i].size);
    return b;
}

/* T_ or T <n> _: a template argument, bounded by what the previous pass found. */
static uint64_t template_param(struct mb *m)
{
    uint32_t at = (uint32_t)(m->p - m->name), index;
    uint64_t b;

    m->p++; /* T */
    index = (uint32_t)(peek(m) == '_' ? 0 : 1);
    if (index) {
        const char *d = m->p;
        uint64_t v = 0;
        while (is_digit(*d) && v < UINT32_MAX)
            v = v * 10 + (uint64_t)(*d++ - '0');
        index = (uint32_t)(v < UINT32_MAX - 1 ? v + 1 : UINT32_MAX);
    }
    compact_number(m);
    b = arg_bound(m->prev, m->nprev, index, at);
    if (m->nrefs < m->cap)
        m->refs[m->nrefs++] = (struct ref){ at, index, b };
    else
        m->bad = true;
    return b;
}

/* <prefix>s of a nested name, up to (not over) its E. */
static uint64_t prefix(struct mb *m, bool substable)
{
    uint64_t s = 0;
    int64_t last = -1; /* the list of the last component, when it is template arguments */
    bool have = false;

    if (!enter(m))
        return 0;
    for (;;) {
        char c = peek(m);
        last = -1;
        if (c == 'D' && (peek2(m) == 'T' || peek2(m) == 't')) {
            if (have)
                m->bad = true;
            s = type(m);
        } else if (c == 'I') {
            if (!have)
                m->bad = true;
            s = add(s, template_args(m));
            last = m->name_list;
        } else if (c == 'T') {
            if (have)
                m->bad = true;
            s = template_param(m);
        } else if (c == 'M') { /* a lambda's initializer scope: not printed */
            m->p++;
            continue;
        } else if (c == 'S') {
            if (have)
                m->bad = true;
            s = substitution(m);
            have = true;
            if (m->bad)
                break;
            continue;
        } else {
            s = add(have ? add(s, 2) : 0, unqualified_name(m));
        }
        have = true;
        if (m->bad || peek(m) == 'E' || peek(m) == '\0')
            break;
        if (substable)
            candidate(m, s, false);
    }
    m->name_list = last;
    return leave(m, s);
}

/* The qualifiers of a type or of a member function: r V K, Dx, Do, DO <expr> E, Dw <types> E. */
static bool next_is_qualifier(const struct mb *m)
{
    char c = peek(m), d = peek2(m);

    return c == 'r' || c == 'V' || c == 'K' ||
           (c == 'D' && (d == 'x' || d == 'o' || d == 'O' || d == 'w'));
}

static uint64_t qualifiers(struct mb *m)
{
    uint64_t s = 0;

    while (!m->bad && next_is_qualifier(m)) {
        char c = *m->p++;
        s = add(s, COMP_COST);
        if (c != 'D')
            continue;
        c = *m->p++;
        if (c == 'O') {
            s = add(s, expression(m));
            eat(m, 'E');
        } else if (c == 'w') {
            while (!m->bad && peek(m) != 'E' && peek(m) != '\0')
                s = add(s, add(type(m), 2));
            eat(m, 'E');
        }
    }
    return s;
}

/* N [<qualifiers>] [<ref-qualifier>] <prefix> E */
static uint64_t nested_name(struct mb *m)
{
    uint64_t s;

    m->p++; /* N */
    s = qualifiers(m);
    if (peek(m) == 'R' || peek(m) == 'O') {
        m->p++;
        s = add(s, 4);
    }
    s = add(s, prefix(m, true));
    eat(m, 'E');
    return s;
}

/* Types up to E, '.' or the end (or a function's ref-qualifier before its E). */
static uint64_t parameters(struct mb *m)
{
    uint64_t s = COMP_COST;
    int n = 0;

    while (!m->bad) {
        char c = peek(m);
        if (c == '\0' || c == 'E' || c == '.')
            break;
        if ((c == 'R' || c == 'O') && peek2(m) == 'E')
            break;
        s = add(s, add(type(m), 2));
        n++;
    }
    if (!n)
        m->bad = true;
    return s;
}

/* [J] <type>+: a function's return type (when it has one) and parameters. */
static uint64_t bare_function_type(struct mb *m)
{
    if (peek(m) == 'J')
        m->p++;
    return parameters(m);
}

/* F [Y] <bare-function-type> [<ref-qualifier>] E */
static uint64_t function_type(struct mb *m)
{
    uint64_t s;

    m->p++; /* F */
    if (peek(m) == 'Y')
        m->p++;
    s = bare_function_type(m);
    if (peek(m) == 'R' || peek(m) == 'O') {
        m->p++;
        s = add(s, 4);
    }
    eat(m, 'E');
    return s;
}

/* Z <encoding> E (s | [d <number> _] <name>) [<discriminator>] */
static uint64_t local_name(struct mb *m)
{
    uint64_t s;

    m->p++; /* Z */
    s = add(encoding(m), COMP_COST);
    eat(m, 'E');
    if (peek(m) == 's') { /* "string literal" */
        m->p++;
        discriminator(m);
        m->name_list = -1;
        return add(s, COMP_COST);
    }
    if (peek(m) == 'd') { /* "{default arg#N}" */
        m->p++;
        s = add(s, add(compact_number(m), COMP_COST));
    }
    bool closure = peek(m) == 'U';
    s = add(s, name(m, false));
    if (!closure)
        discriminator(m);
    return s;
}

/* <name> */
static uint64_t name(struct mb *m, bool substable)
{
    uint64_t s = 0;
    bool subst = false;

    if (!enter(m))
        return 0;
    switch (peek(m)) {
    case 'N':
        s = nested_name(m); /* sets name_list */
        break;
    case 'Z':
        s = local_name(m); /* its entity's name sets name_list */
        break;
    case 'U':
        s = unqualified_name(m);
        m->name_list = -1;
        break;
    default: {
        bool std = false;
        if (peek(m) == 'S' && peek2(m) == 't') {
            m->p += 2;
            std = true;
        }
        if (peek(m) == 'S') {
            if (std)
                m->bad = true;
            s = substitution(m);
            subst = true;
        } else {
            s = add(std ? 5 : 0, unqualified_name(m));
        }
        m->name_list = -1;
        if (!m->bad && peek(m) == 'I') {
            if (!subst)
                candidate(m, s, false);
            s = add(s, template_args(m));
            subst = false;
        }
        break;
    }
    }
    if (substable && !subst)
        candidate(m, s, false);
    return leave(m, s);
}

/* A [<number> | <expression>] _ <type> */
static uint64_t array_type(struct mb *m)
{
    uint64_t s = COMP_COST;

    m->p++; /* A */
    if (is_digit(peek(m)))
        s = add(s, number(m, true));
    else if (peek(m) != '_')
        s = add(s, expression(m));
    eat(m, '_');
    return add(s, type(m));
}

/* <type> */
static uint64_t type(struct mb *m)
{
    uint64_t s = 0;
    bool subst = true;
    char c;

    if (!enter(m))
        return 0;
    if (next_is_qualifier(m)) {
        s = qualifiers(m);
        s = add(s, peek(m) == 'F' ? function_type(m) : type(m));
        candidate(m, s, false);
        return leave(m, s);
    }
    c = peek(m);
    switch (c) {
    case 'a': case 'b': case 'c': case 'd': case 'e': case 'f': case 'g': case 'h': case 'i':
    case 'j': case 'l': case 'm': case 'n': case 'o': case 's': case 't': case 'v': case 'w':
    case 'x': case 'y': case 'z':
        m->p++;
        s = COMP_COST;
        subst = false;
        break;
    case 'u':
        m->p++;
        s = add(source_name(m), COMP_COST);
        break;
    case 'F':
        s = function_type(m);
        break;
    case 'A':
        s = array_type(m);
        break;
    case 'M':
        m->p++;
        s = add(type(m), COMP_COST);
        s = add(s, type(m));
        break;
    case 'T':
        s = template_param(m);
        if (peek(m) == 'I') {
            /* A template template parameter with its arguments. In a conversion operator's
             * type the arguments may be the operator's own instead: taken as the parameter's
             * only when more arguments follow (as the demangler decides). */
            if (!m->conversion) {
                candidate(m, s, false);
                s = add(s, template_args(m));
            } else {
                struct mb keep = *m;
                uint64_t args = template_args(m);
                if (!m->bad && peek(m) == 'I') {
                    candidate(m, s, false);
                    s = add(s, args);
                } else {
                    *m = keep;
                }
            }
        }
        break;
    case 'O': case 'P': case 'R': case 'C': case 'G':
        m->p++;
        s = add(type(m), COMP_COST);
        break;
    case 'U': /* a vendor qualifier, with template arguments maybe */
        m->p++;
        s = add(source_name(m), COMP_COST);
        if (peek(m) == 'I')
            s = add(s, template_args(m));
        s = add(s, type(m));
        break;
    case 'D':
        c = peek2(m);
        if (!c) {
            m->bad = true;
            break;
        }
        m->p += 2;
        subst = false;
        switch (c) {
        case 'T': case 't': /* decltype (expression) */
            s = add(expression(m), COMP_COST);
            eat(m, 'E');
            subst = true;
            break;
        case 'p': /* a pack expansion: the pattern once per element */
            s = add(mul(type(m), m->pack), mul(m->pack, 2));
            subst = true;
            break;
        case 'a': case 'c': case 'f': case 'd': case 'e': case 'h': case 'u': case 's': case 'i':
        case 'n':
            s = COMP_COST;
            break;
        case 'F': /* _Float<N>, _Float<N>x, std::bfloat16_t */
            number(m, true);
            if (peek(m) == 'b' || peek(m) == 'x' || peek(m) == '_')
                m->p++;
            else
                m->bad = true;
            s = COMP_COST;
            break;
        case 'v': /* a vector: Dv <number> _ <type>, Dv _ <expression> _ <type> */
            if (peek(m) == '_') {
                m->p++;
                s = expression(m);
            } else {
                s = number(m, true);
            }
            eat(m, '_');
            s = add(add(s, COMP_COST), type(m));
            subst = true;
            break;
        default:
            m->bad = true;
        }
        break;
    default:
        /* A class or enum: a name, numbered by name() itself. */
        return leave(m, name(m, true));
    }
    if (subst)
        candidate(m, s, false);
    return leave(m, s);
}

/* L <type> <value> E, L <mangled-name> E */
static uint64_t expr_primary(struct mb *m)
{
    uint64_t s;

    m->p++; /* L */
    if (peek(m) == '_' || peek(m) == 'Z') {
        if (peek(m) == '_')
            m->p++;
        eat(m, 'Z');
        s = add(encoding(m), COMP_COST);
    } else {
        bool null = peek(m) == 'D' && peek2(m) == 'n';
        const char *v;
        s = add(type(m), COMP_COST);
        if (null && peek(m) == 'E') {
            m->p++;
            return s;
        }
        v = m->p;
        while (!m->bad && peek(m) != 'E') {
            if (peek(m) == '\0')
                m->bad = true;
            else
                m->p++;
        }
        s = add(s, 2 * (uint64_t)(m->p - v));
    }
    eat(m, 'E');
    return s;
}

/* Expressions up to (and over) the terminator. */
static uint64_t expression_list(struct mb *m, char end)
{
    uint64_t s = COMP_COST;

    while (!m->bad && peek(m) != end) {
        if (peek(m) == '\0')
            m->bad = true;
        else
            s = add(s, add(expression(m), 2));
    }
    if (!m->bad)
        m->p++;
    return s;
}

/* <template-arg>: a type, X <expression> E, an <expr-primary>, or a pack I/J ... E. */
static uint64_t template_arg(struct mb *m)
{
    uint64_t a = 0;

    switch (peek(m)) {
    case 'X':
        m->p++;
        a = expression(m);
        eat(m, 'E');
        break;
    case 'L':
        a = expr_primary(m);
        break;
    case 'I': case 'J': /* an argument pack */
        a = template_args(m);
        break;
    case '\0':
        m->bad = true;
        break;
    default:
        a = type(m);
    }
    return a;
}

/* <template-arg>* E, after the I or J (or a vendor expression's name). */
static uint64_t template_args_1(struct mb *m)
{
    uint64_t s = COMP_COST;
    uint32_t n = 0, list = m->nlists - 1;

    while (!m->bad && peek(m) != 'E') {
        uint32_t start = (uint32_t)(m->p - m->name);
        uint64_t a = template_arg(m);
        if (m->nargs < m->cap)
            m->args[m->nargs++] = (struct arg){ start, (uint32_t)(m->p - m->name), n, list,
                                                false, a };
        else
            m->bad = true;
        s = add(s, add(a, 2));
        n++;
    }
    eat(m, 'E');
    m->pack_seen = max64(m->pack_seen, n);
    return s;
}

/* <template-args>: I (or J, a pack) <template-arg>* E. Sets name_list to this list. */
static uint64_t template_args(struct mb *m)
{
    uint32_t list = m->nlists++;
    uint64_t s;

    if (!enter(m))
        return 0;
    m->p++;
    s = template_args_1(m);
    m->name_list = list;
    return leave(m, s);
}

/* sr <unresolved-type> <base-unresolved-name>, or (read first by newer demanglers, the other
 * way when the whole name fails so) sr <unresolved-qualifier-level>+ E <base-unresolved-name>:
 * which reading is m->sr_levels. */
static uint64_t unresolved_name(struct mb *m)
{
    uint64_t s = COMP_COST;
    char c;

    m->p += 2; /* sr */
    c = peek(m);
    if (m->sr_levels && (is_digit(c) || is_lower(c) || c == 'C' || c == 'U' || c == 'L')) {
        m->sr_tried = true;
        s = add(s, prefix(m, false));
        if (peek(m) == 'E')
            m->p++;
    } else {
        s = add(s, type(m));
    }
    s = add(s, unqualified_name(m));
    if (!m->bad && peek(m) == 'I')
        s = add(s, template_args(m));
    return s;
}

/* <expression>, the forms a kernel's name may hold; others are not followed. */
static uint64_t expression(struct mb *m)
{
    char c = peek(m), d = peek2(m);
    uint64_t s = COMP_COST;
    bool was = m->expression;
    int args;

    if (!enter(m))
        return 0;
    m->expression = true;
    if (c == 'L') {
        s = expr_primary(m);
    } else if (c == 'T') {
        s = template_param(m);
    } else if (c == 's' && d == 'p') { /* a pack expansion */
        m->p += 2;
        s = add(mul(expression(m), m->pack), mul(m->pack, 2));
    } else if (c == 'f' && d == 'p') { /* a function parameter: {parm#N} */
        m->p += 2;
        if (peek(m) == 'T')
            m->p++;
        else
            s = add(s, compact_number(m));
    } else if (is_digit(c) || (c == 'o' && d == 'n')) {
        if (c == 'o')
            m->p += 2;
        s = unqualified_name(m);
        if (!m->bad && peek(m) == 'I')
            s = add(s, template_args(m));
    } else if ((c == 'i' || c == 't') && d == 'l') { /* {braced list} */
        m->p += 2;
        if (c == 't')
            s = add(s, type(m));
        s = add(s, expression_list(m, 'E'));
    } else if (c == 'u') { /* a vendor expression */
        m->p++;
        s = add(s, source_name(m));
        m->nlists++;
        s = add(s, template_args_1(m));
    } else if (c == 's' && d == 'r') {
        s = unresolved_name(m);
    } else if (c == 's' && d == 't') { /* sizeof (type) */
        m->p += 2;
        s = add(s, type(m));
    } else if (c == 'c' && d == 'v') { /* a cast: cv <type> (<expr> | _ <expr>* E) */
        m->p += 2;
        m->expression = true;
        s = add(s, type(m));
        if (peek(m) == '_') {
            m->p++;
            s = add(s, expression_list(m, 'E'));
        } else {
            s = add(s, expression(m));
        }
    } else if (c == 'v' && is_digit(d)) { /* a vendor operator of d operands */
        m->p += 2;
        s = add(s, source_name(m));
        for (int i = 0; i < d - '0' && !m->bad; i++)
            s = add(s, expression(m));
    } else if ((args = c && d ? operator_args(c, d) : -1) < 0) {
        m->bad = true;
    } else {
        m->p += 2;
        if (args == 1) {
            if ((c == 'p' || c == 'm') && d == c && peek(m) == '_') /* prefix ++ -- */
                m->p++;
            if (c == 's' && d == 'P') {
                m->nlists++;
                s = add(s, mul(template_args_1(m), m->pack));
            }
            else
                s = add(s, expression(m));
        } else if (args == 2) {
            if (d == 'c' && strchr("sdcr", c)) { /* the named casts */
                s = add(s, type(m));
                s = add(s, expression(m));
            } else if (c == 'f') { /* a fold: (... op pack) */
                if (operator_args(peek(m), peek2(m)) < 0)
                    m->bad = true;
                else
                    m->p += 2;
                s = add(s, mul(expression(m), m->pack));
            } else if (c == 'd' && d == 'i') { /* .name = expr */
                s = add(s, unqualified_name(m));
                s = add(s, expression(m));
            } else if (c == 'c' && d == 'l') { /* a call */
                s = add(s, expression(m));
                s = add(s, expression_list(m, 'E'));
            } else if ((c == 'd' || c == 'p') && d == 't') { /* . -> */
                s = add(s, expression(m));
                if ((peek(m) == 'g' && peek2(m) == 's') || (peek(m) == 's' && peek2(m) == 'r')) {
                    s = add(s, expression(m));
                } else {
                    s = add(s, unqualified_name(m));
                    if (!m->bad && peek(m) == 'I')
                        s = add(s, template_args(m));
                }
            } else {
                s = add(s, expression(m));
                s = add(s, expression(m));
            }
        } else if (args == 3) {
            if (c == 'f') { /* a fold with an initial value */
                if (operator_args(peek(m), peek2(m)) < 0)
                    m->bad = true;
                else
                    m->p += 2;
                s = add(s, mul(expression(m), m->pack));
                s = add(s, mul(expression(m), m->pack));
            } else if ((c == 'q' && d == 'u') || (c == 'd' && d == 'X')) {
                for (int i = 0; i < 3 && !m->bad; i++)
                    s = add(s, expression(m));
            } else if (c == 'n' && (d == 'w' || d == 'a')) { /* new (args) type (init) */
                s = add(s, expression_list(m, '_'));
                s = add(s, type(m));
                if (peek(m) == 'E') {
                    m->p++;
                } else if (peek(m) == 'p' && peek2(m) == 'i') {
                    m->p += 2;
                    s = add(s, expression_list(m, 'E'));
                } else if (peek(m) == 'i' && peek2(m) == 'l') {
                    s = add(s, expression(m));
                } else {
                    m->bad = true;
                }
            } else {
                m->bad = true;
            }
        }
    }
    m->expression = was;
    return leave(m, s);
}

/* h <number> _ or v <number> _ <number> _: a thunk's offsets, not printed. */
static void call_offset(struct mb *m)
{
    char c = peek(m);

    if (c != 'h' && c != 'v') {
        m->bad = true;
        return;
    }
    m->p++;
    number(m, false);
    if (c == 'v') {
        eat(m, '_');
        number(m, false);
    }
    eat(m, '_');
}

/* <special-name>: vtables, type information, thunks, guard variables, clones (never a kernel,
 * but names of any kind come here). */
static uint64_t special_name(struct mb *m)
{
    char c = peek(m), d = peek2(m);
    uint64_t s = COMP_COST;

    if (!d) {
        m->bad = true;
        return 0;
    }
    m->p += 2;
    if (c == 'T') {
        switch (d) {
        case 'V': case 'T': case 'I': case 'S': case 'F': case 'J':
            return add(s, type(m));
        case 'h': case 'v':
            m->p--;
            call_offset(m);
            return add(s, encoding(m));
        case 'c':
            call_offset(m);
            call_offset(m);
            return add(s, encoding(m));
        case 'C':
            s = add(s, type(m));
            number(m, false);
            eat(m, '_');
            return add(s, type(m));
        case 'H': case 'W':
            return add(s, name(m, false));
        case 'A':
            m->nlists++;
            return add(s, template_arg(m));
        default:
            break;
        }
    } else if (c == 'G') {
        switch (d) {
        case 'V':
            return add(s, name(m, false));
        case 'R':
            s = add(s, name(m, false));
            return add(s, number(m, false));
        case 'A':
            return add(s, encoding(m));
        case 'T':
            if (peek(m))
                m->p++;
            return add(s, encoding(m));
        default:
            break;
        }
    }
    m->bad = true;
    return 0;
}

/* <encoding>: a name, and a function's types after it; or a special name. */
static uint64_t encoding(struct mb *m)
{
    uint64_t s;

    if (!enter(m))
        return 0;
    if (peek(m) == 'G' || peek(m) == 'T')
        return leave(m, special_name(m));
    s = name(m, false);
    if (!m->bad && peek(m) != '\0' && peek(m) != 'E' && peek(m) != '.') {
        /* A function template: its arguments are what its template parameters print. */
        for (uint32_t i = 0; m->name_list >= 0 && i < m->nargs; i++)
            if (m->args[i].list == (uint32_t)m->name_list)
                m->args[i].scope = true;
        s = add(s, bare_function_type(m));
    }
    return leave(m, s);
}

/* The grammar's bound on m's name (after "_Z"), or SAT when not followed. */
static uint64_t one_pass(struct mb *m)
{
    uint64_t b = encoding(m);

    /* Clone suffixes: " [clone .constprop.0]". */
    while (!m->bad && peek(m) == '.' &&
           (is_lower(peek2(m)) || is_digit(peek2(m)) || peek2(m) == '_')) {
        const char *t = m->p;
        m->p += 2;
        while (is_lower(peek(m)) || is_digit(peek(m)) || peek(m) == '_')
            m->p++;
        while (peek(m) == '.' && is_digit(peek2(m))) {
            m->p += 2;
            while (is_digit(peek(m)))
                m->p++;
        }
        b = add(b, add((uint64_t)(m->p - t), COMP_COST));
    }
    return m->bad || m->p != m->end ? SAT : b;
}

/* The grammar's bound, or SAT: passes until every template parameter was given at least what
 * the arguments it may name turned out to be, and every pack expansion the largest list. */
static uint64_t grammar_bound(const char *name, size_t len, uint64_t cap, bool sr_levels,
                              bool *sr_tried)
{
    struct cand *c = malloc(len * sizeof *c);
    struct arg *args[2] = { malloc(len * sizeof *args[0]), malloc(len * sizeof *args[1]) };
    struct ref *refs = malloc(len * sizeof *refs);
    uint64_t b = SAT, pack = 1;
    uint32_t nprev = 0;

    for (int pass = 0; c && args[0] && args[1] && refs && pass < 8; pass++) {
        struct mb m = { .name = name, .p = name + 2, .end = name + len, .c = c,
                        .cap = (uint32_t)len, .args = args[pass % 2], .refs = refs,
                        .prev = args[(pass + 1) % 2], .nprev = nprev, .pack = pack,
                        .sr_levels = sr_levels };
        bool enough = true;

        b = one_pass(&m);
        *sr_tried = *sr_tried || m.sr_tried;
        if (b > cap)
            break;
        for (uint32_t i = 0; i < m.nrefs && enough; i++)
            enough = arg_bound(m.args, m.nargs, m.refs[i].index, m.refs[i].at) <= m.refs[i].used;
        if (enough && m.pack_seen <= pack)
            break;
        nprev = m.nargs;
        pack = max64(pack, m.pack_seen);
        b = SAT;
    }
    free(c);
    free(args[0]);
    free(args[1]);
    free(refs);
    return b;
}

uint64_t mangled_bound(const char *mangled, uint64_t cap)
{
    size_t len = mangled ? strlen(mangled) : 0;
    uint64_t b;

    if (len < 3 || len > MANGLED_MAX || mangled[0] != '_' || mangled[1] != 'Z')
        return UINT64_MAX;
    /* An unresolved name is read one way, and the other way when the whole name fails so (as
     * libiberty does): the larger of the readings that hold. */
    bool tried = false, ignored = false;
    b = grammar_bound(mangled, len, cap, true, &tried);
    if (tried) {
        uint64_t other = grammar_bound(mangled, len, cap, false, &ignored);
        b = b == SAT ? other : other == SAT ? b : max64(b, other);
    }
    return b > cap || b >= SAT ? UINT64_MAX : b;
}
