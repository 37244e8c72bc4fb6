/* decimal.c - a decimal number's nearest double, computed exactly in 128-bit integers (the
 * JSON reader's fast path; strtod elsewhere). */
#include "decimal.h"

#include <math.h>

#ifdef __SIZEOF_INT128__
typedef unsigned __int128 u128;

static int bits128(u128 x)
{
    uint64_t hi = (uint64_t)(x >> 64);

    return hi ? 128 - __builtin_clzll(hi) : (uint64_t)x ? 64 - __builtin_clzll((uint64_t)x) : 0;
}

/* x * 2^shift, rounded to the nearest double (ties to even); sticky: bits below x that are
 * not zero. */
static double round128(u128 x, int shift, bool sticky)
{
    int k = bits128(x) - 53;
    uint64_t mant;

    if (k <= 0)
        return ldexp((double)(uint64_t)x, shift); /* exact: sticky is never set here */
    mant = (uint64_t)(x >> k);
    u128 rest = x & (((u128)1 << k) - 1), half = (u128)1 << (k - 1);
    if (rest > half || (rest == half && (sticky || (mant & 1)))) {
        if (++mant == (uint64_t)1 << 53) {
            mant >>= 1;
            k++;
        }
    }
    return ldexp((double)mant, k + shift);
}

bool decimal_to_double(uint64_t m, int e10, double *out)
{
    u128 p10 = 1;

    if (m == 0) {
        *out = 0.0;
        return true;
    }
    if (e10 > 19 || e10 < -21)
        return false;
    for (int i = 0; i < (e10 < 0 ? -e10 : e10); i++)
        p10 *= 10;
    if (e10 >= 0) {
        *out = round128((u128)m * p10, 0, false);
        return true;
    }
    /* m / 10^-e10: m shifted to the top of 127 bits, divided; the quotient keeps at least 54
     * bits (10^21 < 2^70), the remainder says whether anything was cut off. */
    int s = 127 - bits128(m);
    u128 n = (u128)m << s;
    *out = round128(n / p10, -s, n % p10 != 0);
    return true;
}
#else
bool decimal_to_double(uint64_t m, int e10, double *out)
{
    return false;
}
#endif
