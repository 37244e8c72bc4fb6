/* mangled_type.c - the types of mangled.c's bound: builtin, qualified, function, array,
 * pointer-to-member, template parameter, decltype, pack expansion and vector types. */
#include "ac_config.h" /* autoconf: _GNU_SOURCE, PACKAGE_VERSION */
#include "mangled_grammar.h"

/* Types up to E, '.' or the end (or a function's ref-qualifier before its E). */
uint64_t mgl_parameters(struct mb *m)
{
    uint64_t s = COMP_COST;
    int n = 0;

    while (!m->bad) {
        char c = peek(m);
        if (c == '\0' || c == 'E' || c == '.')
            break;
        if ((c == 'R' || c == 'O') && peek2(m) == 'E')
            break;
        s = add(s, add(mgl_type(m), 2));
        n++;
    }
    if (!n)
        m->bad = true;
    return s;
}

/* [J] <type>+: a function's return type (when it has one) and parameters. */
uint64_t mgl_bare_function_type(struct mb *m)
{
    if (peek(m) == 'J')
        m->p++;
    return mgl_parameters(m);
}

/* F [Y] <bare-function-type> [<ref-qualifier>] E */
static uint64_t function_type(struct mb *m)
{
    uint64_t s;

    m->p++; /* F */
    if (peek(m) == 'Y')
        m->p++;
    s = mgl_bare_function_type(m);
    if (peek(m) == 'R' || peek(m) == 'O') {
        m->p++;
        s = add(s, 4);
    }
    eat(m, 'E');
    return s;
}

/* A [<number> | <expression>] _ <type> */
static uint64_t array_type(struct mb *m)
{
    uint64_t s = COMP_COST;

    m->p++; /* A */
    if (is_digit(peek(m)))
        s = add(s, mgl_number(m, true));
    else if (peek(m) != '_')
        s = add(s, mgl_expression(m));
    eat(m, '_');
    return add(s, mgl_type(m));
}

/* T_ ..., a template parameter as a type: a template template parameter with its arguments
 * too. In a conversion operator's type the arguments may be the operator's own instead:
 * taken as the parameter's only when more arguments follow (as the demangler decides). */
static uint64_t template_type(struct mb *m)
{
    uint64_t s = mgl_template_param(m);

    if (peek(m) != 'I')
        return s;
    if (!m->conversion) {
        mgl_candidate(m, s, false);
        return add(s, mgl_template_args(m));
    }
    struct mb keep = *m;
    uint64_t args = mgl_template_args(m);
    if (!m->bad && peek(m) == 'I') {
        mgl_candidate(m, s, false);
        return add(s, args);
    }
    *m = keep;
    return s;
}

/* D <letter> ...: the builtin types of two letters, decltype, pack expansions and vectors;
 * *subst says whether the type is a substitution candidate. */
static uint64_t builtin_d(struct mb *m, bool *subst)
{
    uint64_t s = 0;
    char c = peek2(m);

    if (!c) {
        m->bad = true;
        return 0;
    }
    m->p += 2;
    *subst = false;
    switch (c) {
    case 'T': case 't': /* decltype (expression) */
        s = add(mgl_expression(m), COMP_COST);
        eat(m, 'E');
        *subst = true;
        break;
    case 'p': /* a pack expansion: the pattern once per element */
        s = add(mul(mgl_type(m), m->pack), mul(m->pack, 2));
        *subst = true;
        break;
    case 'a': case 'c': case 'f': case 'd': case 'e': case 'h': case 'u': case 's': case 'i':
    case 'n':
        s = COMP_COST;
        break;
    case 'F': /* _Float<N>, _Float<N>x, std::bfloat16_t */
        mgl_number(m, true);
        if (peek(m) == 'b' || peek(m) == 'x' || peek(m) == '_')
            m->p++;
        else
            m->bad = true;
        s = COMP_COST;
        break;
    case 'v': /* a vector: Dv <number> _ <type>, Dv _ <expression> _ <type> */
        if (peek(m) == '_') {
            m->p++;
            s = mgl_expression(m);
        } else {
            s = mgl_number(m, true);
        }
        eat(m, '_');
        s = add(add(s, COMP_COST), mgl_type(m));
        *subst = true;
        break;
    default:
        m->bad = true;
    }
    return s;
}

/* <type> */
uint64_t mgl_type(struct mb *m)
{
    uint64_t s = 0;
    bool subst = true;
    char c;

    if (!enter(m))
        return 0;
    if (mgl_next_is_qualifier(m)) {
        s = mgl_qualifiers(m);
        s = add(s, peek(m) == 'F' ? function_type(m) : mgl_type(m));
        mgl_candidate(m, s, false);
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
        s = add(mgl_source_name(m), COMP_COST);
        break;
    case 'F':
        s = function_type(m);
        break;
    case 'A':
        s = array_type(m);
        break;
    case 'M':
        m->p++;
        s = add(mgl_type(m), COMP_COST);
        s = add(s, mgl_type(m));
        break;
    case 'T':
        s = template_type(m);
        break;
    case 'O': case 'P': case 'R': case 'C': case 'G':
        m->p++;
        s = add(mgl_type(m), COMP_COST);
        break;
    case 'U': /* a vendor qualifier, with template arguments maybe */
        m->p++;
        s = add(mgl_source_name(m), COMP_COST);
        if (peek(m) == 'I')
            s = add(s, mgl_template_args(m));
        s = add(s, mgl_type(m));
        break;
    case 'D':
        s = builtin_d(m, &subst);
        break;
    default:
        /* A class or enum: a name, numbered by mgl_name() itself. */
        return leave(m, mgl_name(m, true));
    }
    if (subst)
        mgl_candidate(m, s, false);
    return leave(m, s);
}
