/* decimal.h - a decimal number's nearest double, exactly, without strtod. */
#ifndef KTIME_DECIMAL_H
#define KTIME_DECIMAL_H

#include <stdbool.h>
#include <stdint.h>

/* The double nearest to m * 10^e10 (ties to even) into *out, computed exactly in 128 bits
 * where that is possible (m < 10^19, -21 <= e10 <= 19: every number the library writes with
 * %.17g from 1e-5 up). Returns false elsewhere, and where the compiler has no 128-bit
 * integers (the caller then asks strtod). Any thread. */
bool decimal_to_double(uint64_t m, int e10, double *out);

#endif
