/* mangled.c - an upper bound on the length of a C++ symbol's demangled form (mangled.h): names,
 * special names and the passes over the whole symbol; types are read in mangled_type.c,
 * expressions and template arguments in mangled_expr.c. */
#include "ac_config.h" /* autoconf: _GNU_SOURCE, PACKAGE_VERSION */
#include "mangled.h"
#include "mangled_grammar.h"

#include <stdlib.h>
#include <string.h>

static uint64_t special_name(struct mb *m);

void mgl_candidate(struct mb *m, uint64_t size, bool optional)
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
uint64_t mgl_number(struct mb *m, bool required)
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
uint64_t mgl_compact_number(struct mb *m)
{
    uint64_t n = 0;

    if (peek(m) == 'n') {
        m->bad = true;
        return 0;
    }
    if (peek(m) != '_')
        n = mgl_number(m, true);
    eat(m, '_');
    return n;
}

uint64_t mgl_source_name(struct mb *m)
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
        mgl_number(m, true);
        if (peek(m) == '_')
            m->p++;
    } else {
        mgl_number(m, true);
    }
}

static uint64_t abi_tags(struct mb *m, uint64_t s)
{
    while (!m->bad && peek(m) == 'B') {
        m->p++;
        s = add(s, add(mgl_source_name(m), COMP_COST));
    }
    return s;
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
        return add(s, mgl_source_name(m));
    if (c1 == 'c' && c2 == 'v') {
        bool was = m->conversion;
        m->conversion = !m->expression;
        s = add(s, mgl_type(m));
        m->conversion = was;
        return s;
    }
    if (mgl_operator_args(c1, c2) < 0) {
        m->bad = true;
        return 0;
    }
    if (c1 == 'l' && c2 == 'i')
        s = add(s, mgl_source_name(m));
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
            s = add(s, mgl_type(m));
        else if (k == 't') {
            /* a template template parameter's own head, up to its E */
            while (!m->bad && peek(m) == 'T' && strchr("yntp", peek2(m)) && peek2(m)) {
                m->p += 2;
                s = add(s, COMP_COST);
                if (m->p[-1] == 'n')
                    s = add(s, mgl_type(m));
                else if (m->p[-1] == 't')
                    m->bad = true; /* deeper heads: not followed */
            }
            eat(m, 'E');
        } else if (k != 'y') {
            m->bad = true;
        }
    }
    s = add(s, mgl_parameters(m));
    eat(m, 'E');
    s = add(s, mgl_compact_number(m));
    return s;
}

/* <unqualified-name> */
uint64_t mgl_unqualified_name(struct mb *m)
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
        s = add(s, mgl_source_name(m));
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
            s = add(s, add(mgl_source_name(m), 2));
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
            s = add(s, mgl_type(m));
    } else if (c == 'L') { /* internal linkage */
        m->p++;
        s = add(s, mgl_source_name(m));
        discriminator(m);
    } else if (c == 'U' && peek2(m) == 'l') {
        uint64_t l = lambda(m);
        s = add(s, l);
        /* Numbered as a candidate by itself in older demanglers, not in newer ones. */
        mgl_candidate(m, l, true);
    } else if (c == 'U' && peek2(m) == 't') {
        m->p += 2;
        s = add(s, add(mgl_compact_number(m), COMP_COST));
        mgl_candidate(m, s, false);
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
        mgl_candidate(m, s, false);
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
uint64_t mgl_template_param(struct mb *m)
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
    mgl_compact_number(m);
    b = arg_bound(m->prev, m->nprev, index, at);
    if (m->nrefs < m->cap)
        m->refs[m->nrefs++] = (struct ref){ at, index, b };
    else
        m->bad = true;
    return b;
}

/* <prefix>s of a nested name, up to (not over) its E. */
uint64_t mgl_prefix(struct mb *m, bool substable)
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
            s = mgl_type(m);
        } else if (c == 'I') {
            if (!have)
                m->bad = true;
            s = add(s, mgl_template_args(m));
            last = m->name_list;
        } else if (c == 'T') {
            if (have)
                m->bad = true;
            s = mgl_template_param(m);
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
            s = add(have ? add(s, 2) : 0, mgl_unqualified_name(m));
        }
        have = true;
        if (m->bad || peek(m) == 'E' || peek(m) == '\0')
            break;
        if (substable)
            mgl_candidate(m, s, false);
    }
    m->name_list = last;
    return leave(m, s);
}

/* The qualifiers of a type or of a member function: r V K, Dx, Do, DO <expr> E, Dw <types> E. */
bool mgl_next_is_qualifier(const struct mb *m)
{
    char c = peek(m), d = peek2(m);

    return c == 'r' || c == 'V' || c == 'K' ||
           (c == 'D' && (d == 'x' || d == 'o' || d == 'O' || d == 'w'));
}

uint64_t mgl_qualifiers(struct mb *m)
{
    uint64_t s = 0;

    while (!m->bad && mgl_next_is_qualifier(m)) {
        char c = *m->p++;
        s = add(s, COMP_COST);
        if (c != 'D')
            continue;
        c = *m->p++;
        if (c == 'O') {
            s = add(s, mgl_expression(m));
            eat(m, 'E');
        } else if (c == 'w') {
            while (!m->bad && peek(m) != 'E' && peek(m) != '\0')
                s = add(s, add(mgl_type(m), 2));
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
    s = mgl_qualifiers(m);
    if (peek(m) == 'R' || peek(m) == 'O') {
        m->p++;
        s = add(s, 4);
    }
    s = add(s, mgl_prefix(m, true));
    eat(m, 'E');
    return s;
}

/* Z <encoding> E (s | [d <number> _] <name>) [<discriminator>] */
static uint64_t local_name(struct mb *m)
{
    uint64_t s;

    m->p++; /* Z */
    s = add(mgl_encoding(m), COMP_COST);
    eat(m, 'E');
    if (peek(m) == 's') { /* "string literal" */
        m->p++;
        discriminator(m);
        m->name_list = -1;
        return add(s, COMP_COST);
    }
    if (peek(m) == 'd') { /* "{default arg#N}" */
        m->p++;
        s = add(s, add(mgl_compact_number(m), COMP_COST));
    }
    bool closure = peek(m) == 'U';
    s = add(s, mgl_name(m, false));
    if (!closure)
        discriminator(m);
    return s;
}

/* <name> */
uint64_t mgl_name(struct mb *m, bool substable)
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
        s = mgl_unqualified_name(m);
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
            s = add(std ? 5 : 0, mgl_unqualified_name(m));
        }
        m->name_list = -1;
        if (!m->bad && peek(m) == 'I') {
            if (!subst)
                mgl_candidate(m, s, false);
            s = add(s, mgl_template_args(m));
            subst = false;
        }
        break;
    }
    }
    if (substable && !subst)
        mgl_candidate(m, s, false);
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
    mgl_number(m, false);
    if (c == 'v') {
        eat(m, '_');
        mgl_number(m, false);
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
            return add(s, mgl_type(m));
        case 'h': case 'v':
            m->p--;
            call_offset(m);
            return add(s, mgl_encoding(m));
        case 'c':
            call_offset(m);
            call_offset(m);
            return add(s, mgl_encoding(m));
        case 'C':
            s = add(s, mgl_type(m));
            mgl_number(m, false);
            eat(m, '_');
            return add(s, mgl_type(m));
        case 'H': case 'W':
            return add(s, mgl_name(m, false));
        case 'A':
            m->nlists++;
            return add(s, mgl_template_arg(m));
        default:
            break;
        }
    } else if (c == 'G') {
        switch (d) {
        case 'V':
            return add(s, mgl_name(m, false));
        case 'R':
            s = add(s, mgl_name(m, false));
            return add(s, mgl_number(m, false));
        case 'A':
            return add(s, mgl_encoding(m));
        case 'T':
            if (peek(m))
                m->p++;
            return add(s, mgl_encoding(m));
        default:
            break;
        }
    }
    m->bad = true;
    return 0;
}

/* <encoding>: a name, and a function's types after it; or a special name. */
uint64_t mgl_encoding(struct mb *m)
{
    uint64_t s;

    if (!enter(m))
        return 0;
    if (peek(m) == 'G' || peek(m) == 'T')
        return leave(m, special_name(m));
    s = mgl_name(m, false);
    if (!m->bad && peek(m) != '\0' && peek(m) != 'E' && peek(m) != '.') {
        /* A function template: its arguments are what its template parameters print. */
        for (uint32_t i = 0; m->name_list >= 0 && i < m->nargs; i++)
            if (m->args[i].list == (uint32_t)m->name_list)
                m->args[i].scope = true;
        s = add(s, mgl_bare_function_type(m));
    }
    return leave(m, s);
}

/* The grammar's bound on m's name (after "_Z"), or SAT when not followed. */
static uint64_t one_pass(struct mb *m)
{
    uint64_t b = mgl_encoding(m);

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
