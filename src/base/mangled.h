/* mangled.h - how long the demangled form of a C++ symbol can be, read from the mangled name
 * alone, so that a name whose demangling would explode is never given to the demangler. No
 * CUDA, no allocation that grows with anything but the name. */
#ifndef KTIME_MANGLED_H
#define KTIME_MANGLED_H

#include <stddef.h>
#include <stdint.h>

/* An upper bound on the length in bytes of what an Itanium C++ ABI demangler (libstdc++'s
 * __cxa_demangle, which is GCC's libiberty) prints for the symbol mangled ("_Z..."), or
 * UINT64_MAX when it may be larger than cap, or when the name cannot be bounded: not a symbol
 * this follows to its end (an unknown construct, a malformed name, over 65536 bytes). Only a
 * name with a bound should be given to the demangler: its time and memory then follow.
 *
 * A substitution (S_, S<seq>_) or a template parameter (T_, T<n>_) prints a component seen
 * elsewhere in full, so a few hundred bytes can demangle to gigabytes. The bound follows the
 * mangling's grammar as libiberty reads it, keeping each substitution candidate's bound in
 * the order the demangler numbers them (tolerant of the numbering differences between its
 * versions); a template parameter is bounded by the largest argument of that number of any
 * function template in the name (passes repeat until that holds), a pack expansion by the
 * largest argument list. Reads the name; allocates tables of its length. Any thread. */
uint64_t mangled_bound(const char *mangled, uint64_t cap);

#endif
