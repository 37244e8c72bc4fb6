/* mangled_expr.c - the expressions and template arguments of mangled.c's bound: the parts of
 * the grammar that a kernel's template arguments bring in (values, casts, folds, calls). */
#include "ac_config.h" /* autoconf: _GNU_SOURCE, PACKAGE_VERSION */
#include "mangled_grammar.h"

#include <string.h>

static uint64_t unresolved_name(struct mb *m);
static uint64_t expr_primary(struct mb *m);

/* The two-letter operators and their operand counts, as the ABI lists them. */
static const char operators[] =
    "aN2aS2aa2ad1an2at1aw1az1cc2cl2cm2co1dV2dX3da1dc2de1di2dl1ds2dt2dv2dx2eO2eo2eq2fL3fR3fl2"
    "fr2ge2gs1gt2ix2lS2le2li1ls2lt2mI2mL2mi2ml2mm1na3ne2ng1nt1nw3nx1oR2oo2or2pL2pl2pm2pp1ps1"
    "pt2qu3rM2rS2rc2rm2rs2sP1sZ1sc2ss2st1sz1tr0tw1";

/* The operand count of operator c1 c2, or -1 when it is none. */
int mgl_operator_args(char c1, char c2)
{
    for (const char *o = operators; *o; o += 3)
        if (o[0] == c1 && o[1] == c2)
            return o[2] - '0';
    return -1;
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
        s = add(mgl_encoding(m), COMP_COST);
    } else {
        bool null = peek(m) == 'D' && peek2(m) == 'n';
        const char *v;
        s = add(mgl_type(m), COMP_COST);
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
            s = add(s, add(mgl_expression(m), 2));
    }
    if (!m->bad)
        m->p++;
    return s;
}

/* <template-arg>: a type, X <expression> E, an <expr-primary>, or a pack I/J ... E. */
uint64_t mgl_template_arg(struct mb *m)
{
    uint64_t a = 0;

    switch (peek(m)) {
    case 'X':
        m->p++;
        a = mgl_expression(m);
        eat(m, 'E');
        break;
    case 'L':
        a = expr_primary(m);
        break;
    case 'I': case 'J': /* an argument pack */
        a = mgl_template_args(m);
        break;
    case '\0':
        m->bad = true;
        break;
    default:
        a = mgl_type(m);
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
        uint64_t a = mgl_template_arg(m);
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
uint64_t mgl_template_args(struct mb *m)
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
        s = add(s, mgl_prefix(m, false));
        if (peek(m) == 'E')
            m->p++;
    } else {
        s = add(s, mgl_type(m));
    }
    s = add(s, mgl_unqualified_name(m));
    if (!m->bad && peek(m) == 'I')
        s = add(s, mgl_template_args(m));
    return s;
}

/* An operator c d of args operands, with its operands (c d not yet read). */
static uint64_t operator_expression(struct mb *m, char c, char d, int args)
{
    uint64_t s = COMP_COST;

    m->p += 2;
    if (args == 1) {
        if ((c == 'p' || c == 'm') && d == c && peek(m) == '_') /* prefix ++ -- */
            m->p++;
        if (c == 's' && d == 'P') {
            m->nlists++;
            s = add(s, mul(template_args_1(m), m->pack));
        }
        else
            s = add(s, mgl_expression(m));
    } else if (args == 2) {
        if (d == 'c' && strchr("sdcr", c)) { /* the named casts */
            s = add(s, mgl_type(m));
            s = add(s, mgl_expression(m));
        } else if (c == 'f') { /* a fold: (... op pack) */
            if (mgl_operator_args(peek(m), peek2(m)) < 0)
                m->bad = true;
            else
                m->p += 2;
            s = add(s, mul(mgl_expression(m), m->pack));
        } else if (c == 'd' && d == 'i') { /* .name = expr */
            s = add(s, mgl_unqualified_name(m));
            s = add(s, mgl_expression(m));
        } else if (c == 'c' && d == 'l') { /* a call */
            s = add(s, mgl_expression(m));
            s = add(s, expression_list(m, 'E'));
        } else if ((c == 'd' || c == 'p') && d == 't') { /* . -> */
            s = add(s, mgl_expression(m));
            if ((peek(m) == 'g' && peek2(m) == 's') || (peek(m) == 's' && peek2(m) == 'r')) {
                s = add(s, mgl_expression(m));
            } else {
                s = add(s, mgl_unqualified_name(m));
                if (!m->bad && peek(m) == 'I')
                    s = add(s, mgl_template_args(m));
            }
        } else {
            s = add(s, mgl_expression(m));
            s = add(s, mgl_expression(m));
        }
    } else if (args == 3) {
        if (c == 'f') { /* a fold with an initial value */
            if (mgl_operator_args(peek(m), peek2(m)) < 0)
                m->bad = true;
            else
                m->p += 2;
            s = add(s, mul(mgl_expression(m), m->pack));
            s = add(s, mul(mgl_expression(m), m->pack));
        } else if ((c == 'q' && d == 'u') || (c == 'd' && d == 'X')) {
            for (int i = 0; i < 3 && !m->bad; i++)
                s = add(s, mgl_expression(m));
        } else if (c == 'n' && (d == 'w' || d == 'a')) { /* new (args) type (init) */
            s = add(s, expression_list(m, '_'));
            s = add(s, mgl_type(m));
            if (peek(m) == 'E') {
                m->p++;
            } else if (peek(m) == 'p' && peek2(m) == 'i') {
                m->p += 2;
                s = add(s, expression_list(m, 'E'));
            } else if (peek(m) == 'i' && peek2(m) == 'l') {
                s = add(s, mgl_expression(m));
            } else {
                m->bad = true;
            }
        } else {
            m->bad = true;
        }
    }
    return s;
}

/* <expression>, the forms a kernel's name may hold; others are not followed. */
uint64_t mgl_expression(struct mb *m)
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
        s = mgl_template_param(m);
    } else if (c == 's' && d == 'p') { /* a pack expansion */
        m->p += 2;
        s = add(mul(mgl_expression(m), m->pack), mul(m->pack, 2));
    } else if (c == 'f' && d == 'p') { /* a function parameter: {parm#N} */
        m->p += 2;
        if (peek(m) == 'T')
            m->p++;
        else
            s = add(s, mgl_compact_number(m));
    } else if (is_digit(c) || (c == 'o' && d == 'n')) {
        if (c == 'o')
            m->p += 2;
        s = mgl_unqualified_name(m);
        if (!m->bad && peek(m) == 'I')
            s = add(s, mgl_template_args(m));
    } else if ((c == 'i' || c == 't') && d == 'l') { /* {braced list} */
        m->p += 2;
        if (c == 't')
            s = add(s, mgl_type(m));
        s = add(s, expression_list(m, 'E'));
    } else if (c == 'u') { /* a vendor expression */
        m->p++;
        s = add(s, mgl_source_name(m));
        m->nlists++;
        s = add(s, template_args_1(m));
    } else if (c == 's' && d == 'r') {
        s = unresolved_name(m);
    } else if (c == 's' && d == 't') { /* sizeof (type) */
        m->p += 2;
        s = add(s, mgl_type(m));
    } else if (c == 'c' && d == 'v') { /* a cast: cv <type> (<expr> | _ <expr>* E) */
        m->p += 2;
        m->expression = true;
        s = add(s, mgl_type(m));
        if (peek(m) == '_') {
            m->p++;
            s = add(s, expression_list(m, 'E'));
        } else {
            s = add(s, mgl_expression(m));
        }
    } else if (c == 'v' && is_digit(d)) { /* a vendor operator of d operands */
        m->p += 2;
        s = add(s, mgl_source_name(m));
        for (int i = 0; i < d - '0' && !m->bad; i++)
            s = add(s, mgl_expression(m));
    } else if ((args = c && d ? mgl_operator_args(c, d) : -1) < 0) {
        m->bad = true;
    } else {
        s = operator_expression(m, c, d, args);
    }
    m->expression = was;
    return leave(m, s);
}
